"""Medians per variant of a tmpfs-ab.csv: python3 med.py tmpfs-ab.csv."""

import csv
import statistics
import sys


def main(path: str) -> None:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for variant in dict.fromkeys(r["variant"] for r in rows):
        rs = [r for r in rows if r["variant"] == variant]

        def med(key: str, rs: list[dict[str, str]] = rs) -> float:
            return statistics.median(float(r[key]) for r in rs)

        cpu = statistics.median(float(r["user_s"]) + float(r["sys_s"]) for r in rs)
        print(
            f"{variant:32s} n={len(rs)} wall {med('wall_s'):.2f} cpu {cpu:.2f} "
            f"user {med('user_s'):.2f} sys {med('sys_s'):.2f} "
            f"out {med('output_user_s'):.2f} sort {med('sort_user_s'):.2f}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
