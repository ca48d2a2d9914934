from app.cli.entry import main

main()
