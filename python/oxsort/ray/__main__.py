"""The command line of :mod:`oxsort.ray`::

    python -m oxsort.ray gensort DIR --records 1e7 --partitions 8 [--skew] [--ascii]
    python -m oxsort.ray sort IN... -o DIR --partitions 8 [--address ADDR] [--overwrite]
        [--record-size N | --lines | --nul] [--fields F | --control FILE | --keys 'FLAGS']
        [--unique] [--memory SIZE] [--threads N] [--local-disk SIZE] [--task-cpus N]
        [--map-size SIZE] [--local-dir DIR] [--shared-local-dir auto|yes|no]
    python -m oxsort.ray sort PART.parquet... -o DIR --by 'k1,k2:desc:nulls_first' [--partitions 8]
        [--output-format parquet|arrow] [--memory SIZE] ...

An input written ``NODE:PATH`` (``NODE``: a Ray node id or IP address, ``:`` after it) is a
file on that node's local disk; any other input is a path every node can read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Optional, Union

from .._native import Error
from . import Input, gensort, sort


def _count(text: str) -> int:
    """A record count, also as ``1e7``."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if v < 0 or v != int(v):
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole, non-negative number")
    return int(v)


def _input(text: str) -> Input:
    node, sep, path = text.partition(":")
    if sep and node and not node.startswith(("/", ".")) and path:
        return (node, path)
    return text


def main(argv: Optional[list[str]] = None) -> int:
    """Runs the command line; returns the exit status."""
    p = argparse.ArgumentParser(prog="python -m oxsort.ray", description=__doc__.split("::")[0])
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("gensort", help="generate benchmark records across the cluster")
    g.add_argument("output_dir")
    g.add_argument("--records", type=_count, required=True)
    g.add_argument("--partitions", type=int, required=True)
    g.add_argument("--skew", action="store_true")
    g.add_argument("--ascii", action="store_true")
    g.add_argument("--address")
    g.add_argument("--overwrite", action="store_true")

    s = sub.add_parser("sort", help="sort files across the cluster into partitions")
    s.add_argument("inputs", nargs="+")
    s.add_argument("-o", "--output-dir", required=True)
    s.add_argument("--partitions", type=int, default=4)
    s.add_argument("--address")
    s.add_argument("--overwrite", action="store_true")
    s.add_argument("--record-size", type=int)
    s.add_argument("--lines", action="store_true")
    s.add_argument("--nul", action="store_true")
    s.add_argument("--fields")
    s.add_argument("--control", help="a file of DFSORT control statements")
    s.add_argument("--keys", help="GNU sort key flags, as one string ('-t, -k2,2n')")
    s.add_argument("--unique", action="store_true", help="keep the first record of each key")
    s.add_argument("--memory", help="per task (default: the node's memory / tasks at once)")
    s.add_argument("--threads", type=int, help="per task (default: cores / tasks at once)")
    s.add_argument("--local-disk", help="per task (default: free local disk / tasks at once)")
    s.add_argument("--task-cpus", type=float, default=1, help="CPUs each task reserves")
    s.add_argument("--map-size")
    s.add_argument("--local-dir")
    s.add_argument(
        "--shared-local-dir",
        choices=["auto", "yes", "no"],
        default="auto",
        help="whether every node sees every node's --local-dir (auto: where a bucket is visible)",
    )
    s.add_argument("--seed", type=int, default=0)
    s.add_argument(
        "--by", help="sort tables (Parquet or Arrow IPC files) by columns: 'k1,k2:desc:nulls_first'"
    )
    s.add_argument("--output-format", choices=["parquet", "arrow"], help="with --by")
    a = p.parse_args(argv)

    try:
        if a.command == "gensort":
            r = gensort(
                a.output_dir,
                a.records,
                a.partitions,
                ascii=a.ascii,
                skew=a.skew,
                address=a.address,
                overwrite=a.overwrite,
            )
        else:
            control: Optional[str] = None
            if a.control:
                try:
                    with open(a.control) as f:
                        control = f.read()
                except OSError as e:
                    raise Error(f"--control {a.control}: {e.strerror}") from None
            inputs: list[Input] = [_input(t) for t in a.inputs]
            memory: Union[str, None] = a.memory
            r = sort(
                inputs,
                a.output_dir,
                partitions=a.partitions,
                address=a.address,
                overwrite=a.overwrite,
                map_size=a.map_size,
                local_dir=a.local_dir,
                seed=a.seed,
                record_size=a.record_size,
                lines=a.lines,
                nul=a.nul,
                fields=a.fields,
                control=control,
                keys=a.keys,
                unique=a.unique,
                memory=memory,
                threads=a.threads,
                local_disk=a.local_disk,
                task_cpus=a.task_cpus,
                shared_local_dir={"auto": None, "yes": True, "no": False}[a.shared_local_dir],
                by=a.by,
                output_format=a.output_format,
            )
    except Error as e:
        print(f"oxsort.ray: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("oxsort.ray: interrupted; the job's temp files were removed", file=sys.stderr)
        return 130
    json.dump(r.to_dict(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
