"""The test suite's own rules: an optional piece is asked for through conftest (need, need_module,
shared_path: skip on a developer's machine, FAIL under SE_GYM_CI=1), a skip that is right even in CI
through legit_skip; no test finds the official data through a hard-coded path."""
from __future__ import annotations

import re

from conftest import REPO

TESTS = REPO / "tests"
BARE = re.compile(r"pytest\.(skip|importorskip)\(|pytest\.mark\.skipif|pytest\.mark\.skip\b")
HARD_PATH = re.compile(r"/work/shared|['\"]shared['\"]\s*/|/\s*['\"]shared['\"]")
# files another helper is converting right now (issue 20.9); delete the entry when converted
PENDING: dict[str, str] = {}


def _offences(pattern: re.Pattern) -> list[str]:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name in ("conftest.py", "test_conventions.py") or path.name in PENDING:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and not line.lstrip().startswith("#"):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    return found


def test_no_bare_skips_outside_conftest():
    offences = _offences(BARE)
    assert not offences, "use need/need_module/shared_path/legit_skip from conftest instead:\n" + "\n".join(offences)


def test_official_data_is_found_through_shared_path():
    offences = _offences(HARD_PATH)
    assert not offences, "use conftest.shared_path(...) instead:\n" + "\n".join(offences)


def test_pending_files_still_exist():
    # an entry outlives its file only by mistake; keeps the exemption list honest
    assert all((TESTS / name).exists() for name in PENDING)
