"""``keys=``: GNU sort's options read as the ``sort`` link reads them, with the CLI as oracle.

Every key kind (``M h V g d f i R n b r``, ``.c`` positions, per-key options, ``-r -s -u``)
gives the bytes of ``oxsort sort --lines -k ...``; global ordering options, which that command
does not take, give the bytes of ``oxsort gnu`` (GNU sort's command line) in the C locale.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

import oxsort

MONTHS = ["jan", "FEB", " mar", "Apr", "dec", "xyz", "", "  Jun"]
HUMAN = ["1K", "2M", "512", "-3G", "0.5T", "1k", "", "7"]
VERSIONS = ["1.2.10", "1.2.9", "1.10", "a-1.0", "2.0~rc1", "2.0", "", "1.2.9a"]
GENERAL = ["1e3", "-2.5", "nan", "0x10", "inf", "-inf", "", "3", "+4", "1E-2"]
WORDS = ["apple", "Apple", "b-c", "b.c", "\tzeta", "ab\x01c", "", "Zed", "a b"]


def gnu_file(path: Path, n: int, seed: int) -> Path:
    """Lines of comma-separated fields: word, number, month, human size, version, general."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            num = rng.choice([str(rng.randrange(-60, 60)), f"{rng.uniform(-9, 9):.2f}", " 7", ""])
            fields = [
                rng.choice(WORDS),
                num,
                rng.choice(MONTHS),
                rng.choice(HUMAN),
                rng.choice(VERSIONS),
                rng.choice(GENERAL),
            ]
            f.write(",".join(fields) + "\n")
    return path


@pytest.fixture
def text(tmp_path: Path) -> Path:
    return gnu_file(tmp_path / "in.txt", 4000, 11)


#: Key options and where they apply, each also a flag of ``oxsort sort``.
KEY_CASES = [
    "-t, -k3,3M",
    "-t, -k3,3Mr -k1,1",
    "-t, -k4,4h",
    "-t, -k5,5V",
    "-t, -k6,6g",
    "-t, -k1,1d",
    "-t, -k1,1f",
    "-t, -k1,1i",
    "-t, -k1,1df -k2,2n",
    "-t, -k2,2n",
    "-t, -k2,2nr -s",
    "-t, -k2b,2n -u",
    "-t, -k1.2,1.3 -k3",
    "-t, -k1.2b,3.1b",
    "-k1,1 -r",
    "-t, -k2,2 -n",
    "-t, -k3,3M -r -s",
    "-t, -k4,4h -u",
    "-s -t, -k5.1,5.3V",
    "--key=2,2 --field-separator=, --numeric-sort",
]


@pytest.mark.parametrize("keys", KEY_CASES)
def test_key_kinds_match_the_cli(tmp_path: Path, cli: str, text: Path, keys: str) -> None:
    ours, theirs = tmp_path / "py.out", tmp_path / "cli.out"
    oxsort.sort(text, ours, lines=True, keys=keys)
    run_cli(cli, "sort", str(text), "-o", str(theirs), "--lines", *keys.split())
    assert ours.read_bytes() == theirs.read_bytes(), keys


#: Global ordering options, which only GNU sort's own command line takes.
GLOBAL_CASES = ["-f", "-d", "-i", "-M", "-h", "-V", "-g", "-b", "-fr", "--sort=version", "-t, -k2"]


@pytest.mark.parametrize("keys", GLOBAL_CASES)
def test_global_options_match_gnu_sorts_command_line(
    tmp_path: Path, cli: str, text: Path, keys: str
) -> None:
    ours, theirs = tmp_path / "py.out", tmp_path / "gnu.out"
    oxsort.sort(text, ours, lines=True, keys=keys)
    env = dict(os.environ, LC_ALL="C")
    subprocess.run([cli, "gnu", *keys.split(), "-o", str(theirs), str(text)], env=env, check=True)
    assert ours.read_bytes() == theirs.read_bytes(), keys


def test_random_keys_are_the_clis_and_group_equal_keys(
    tmp_path: Path, cli: str, text: Path
) -> None:
    # `oxsort sort -k ...R` hashes with a fixed key, as keys= does: the same bytes, run after run.
    ours, theirs = tmp_path / "py.out", tmp_path / "cli.out"
    oxsort.sort(text, ours, lines=True, keys="-t, -k3,3R -s")
    run_cli(cli, "sort", str(text), "-o", str(theirs), "--lines", "-t,", "-k3,3R", "-s")
    assert ours.read_bytes() == theirs.read_bytes()
    # Equal keys come out together; within a key, input order (-s).
    lines = ours.read_text().splitlines()
    keys = [line.split(",")[2] for line in lines]
    runs = [k for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k]
    assert len(runs) == len(set(keys))
    original = text.read_text().splitlines()
    for k in set(keys):
        assert [x for x in lines if x.split(",")[2] == k] == [
            x for x in original if x.split(",")[2] == k
        ]


def test_nul_records_with_z(tmp_path: Path, cli: str) -> None:
    src = tmp_path / "in.bin"
    src.write_bytes(b"b,2\x00a,10\x00c,1\x00a,2\x00")
    ours, theirs = tmp_path / "py.out", tmp_path / "cli.out"
    oxsort.sort(src, ours, keys="-z -t, -k2,2n")
    run_cli(cli, "sort", str(src), "-o", str(theirs), "--nul", "-t,", "-k2,2n")
    assert ours.read_bytes() == theirs.read_bytes() == b"c,1\x00a,2\x00b,2\x00a,10\x00"


def test_keys_as_a_list_of_arguments(tmp_path: Path, cli: str, text: Path) -> None:
    ours, theirs = tmp_path / "py.out", tmp_path / "cli.out"
    oxsort.sort(text, ours, lines=True, keys=["-t", ",", "-k", "3,3M", "-k1,1f"])
    run_cli(cli, "sort", str(text), "-o", str(theirs), "--lines", "-t,", "-k3,3M", "-k1,1f")
    assert ours.read_bytes() == theirs.read_bytes()


@pytest.mark.parametrize(
    "keys,message",
    [
        ("-k2,2Q", r"keys: argument '-k2,2Q': stray character in field spec"),
        ("-k0", r"keys: argument '-k0': field number is zero"),
        ("-gn", r"keys: options '-gn' are incompatible"),
        ("-t ab", r"keys: argument 'ab': multi-character tab 'ab'"),
        ("-x", r"keys: argument '-x': invalid option -- 'x'"),
        ("--sort=nope", r"keys: argument '--sort=nope': invalid argument 'nope' for '--sort'"),
        ("-k", r"keys: argument '-k': option requires an argument -- 'k'"),
        ("-o out.txt", r"keys: -o .* is not about the key"),
        ("-S 1G", r"keys: -S \(use memory=\) is not about the key"),
        ("-c", r"keys: -c/-C .* is not about the key"),
        ("-k1,1 file.txt", r"keys: 'file.txt' is not an option"),
    ],
)
def test_mistakes_name_the_argument(tmp_path: Path, text: Path, keys: str, message: str) -> None:
    with pytest.raises(oxsort.SpecError, match=message):
        oxsort.sort(text, tmp_path / "out", lines=True, keys=keys)


def test_z_with_lines_is_a_conflict(tmp_path: Path, text: Path) -> None:
    with pytest.raises(oxsort.SpecError, match=r"keys: -z .* conflicts with lines=True"):
        oxsort.sort(text, tmp_path / "out", lines=True, keys="-z")
