"""What a Python user meets first: errors Python's own ``except`` clauses catch, a version,
and a hint when an optional dependency is missing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import oxsort


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "in.dat"
    oxsort.gensort(p, 1000)
    return p


def test_a_missing_input_is_a_file_not_found_error(tmp_path: Path) -> None:
    missing = tmp_path / "missing.dat"
    with pytest.raises(FileNotFoundError) as e:
        oxsort.sort(missing, tmp_path / "out.dat")
    assert isinstance(e.value, oxsort.BadInputError)
    assert e.value.errno == 2
    assert str(e.value) == f"{missing}: No such file or directory"
    assert not (tmp_path / "out.dat").exists()


def test_a_missing_output_directory_says_it_is_the_outputs(tmp_path: Path, data: Path) -> None:
    out = tmp_path / "no" / "out.dat"
    with pytest.raises(FileNotFoundError) as e:
        oxsort.sort(data, out)
    assert isinstance(e.value, oxsort.Error)
    assert str(e.value) == f"checking the output directory {out.parent}: No such file or directory"


def test_version() -> None:
    from importlib.metadata import version

    assert oxsort.__version__ == version("oxsort")
    assert oxsort.__version__[0].isdigit()


def test_argsort_without_numpy_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'oxsort\[numpy\]'"):
        oxsort.argsort([3, 1, 2])  # type: ignore[arg-type]


def test_progress_without_tqdm_warns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data: Path
) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)
    with pytest.warns(UserWarning, match=r"pip install 'oxsort\[progress\]'"):
        oxsort.sort(data, tmp_path / "out.dat", progress=True)
    # The sort went on.
    assert oxsort.valsort(tmp_path / "out.dat").sorted


def test_a_push_of_part_of_a_record_is_refused_at_once(tmp_path: Path) -> None:
    with oxsort.Sorter(temp_dirs=[tmp_path]) as s:
        with pytest.raises(oxsort.BadInputError, match=r"push\(\): 150 bytes .* 100-byte"):
            s.push(b"x" * 150)
        with pytest.raises(oxsort.BadInputError, match="1 byte left over"):
            s.push(memoryview(b"y" * 101))
