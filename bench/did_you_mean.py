"""What a "not vetted" gate answer's did-you-mean costs against many vetted repos (issue 27).

    python bench/did_you_mean.py [--repos 20000] [--reps 7] [--rounds 5]

difflib over every vetted repo id (the rule as first written) beside difflib over the ids rapidfuzz keeps
(app.services.commits._within_reach), in the same process, alternating; CPU seconds per answer, median
of each round, then the median of the rounds. Both must suggest the same ids (checked every round).
"""

from __future__ import annotations

import argparse
import difflib
import random
import statistics
import string
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.services.commits import CLOSE, _within_reach

WANTED = "nvidia/deepseek-v4-flash-nvfp5"


def repo_ids(count: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    ids = [f"{''.join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 12)))}/"
           f"{''.join(rng.choices(string.ascii_lowercase + '-.0123456789', k=rng.randint(5, 40)))}"
           for _ in range(count)]
    return [*ids, "nvidia/deepseek-v4-flash-nvfp4", "nvldia/deepseek-v4-flash-nvfp4"]


def per_answer(suggest: object, reps: int) -> float:
    times = []
    for _ in range(reps):
        started = time.process_time()
        suggest()  # type: ignore[operator]
        times.append(time.process_time() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    known = repo_ids(args.repos)

    def everything() -> list[str]:
        return difflib.get_close_matches(WANTED, known, n=len(known), cutoff=CLOSE)

    def prefiltered() -> list[str]:
        return difflib.get_close_matches(WANTED, _within_reach(WANTED, known), n=len(known), cutoff=CLOSE)

    rounds: dict[str, list[float]] = {"difflib over all": [], "rapidfuzz, then difflib": []}
    for _ in range(args.rounds):
        assert everything() == prefiltered(), "the prefilter changed the suggestions"
        rounds["difflib over all"].append(per_answer(everything, args.reps))
        rounds["rapidfuzz, then difflib"].append(per_answer(prefiltered, args.reps))
    for name, values in rounds.items():
        print(f"{name:26} {statistics.median(values) * 1000:8.2f} ms  rounds: "
              + ", ".join(f"{v * 1000:.2f}" for v in values))
    ratio = statistics.median(rounds["difflib over all"]) / statistics.median(rounds["rapidfuzz, then difflib"])
    print(f"ratio {ratio:.0f}x; suggestions: {prefiltered()}")


if __name__ == "__main__":
    main()
