from app.cli.entry import main

if __name__ == "__main__":  # not when a spawned vet process imports this module as __mp_main__
    main()
