"""The compatibility matrix (scripts/compat.sh): for each stack se-gym integrates with, the release its
extra pins or resolves to today ("resolved") and, with --newest, the newest release on the index; a venv
holding that release; the stack's smoke test (scripts/compat_smoke.py) in it; a table in
docs/integrations/compatibility.md.

Venvs: a py3.11 stack's venv is a new venv layered over the test venv (a .pth lists the test venv's
site-packages after its own): the release, and whatever of its dependencies the test venv lacks or
has at a version it refuses, go into the venv's own site-packages.  NeMo Gym's is a Python 3.13 venv
of its own.  Without --fresh, a venv that already holds exactly that release is reused (the test venv,
the venvs scripts/setup/integrations.sh makes, or one this script built before, under --dir).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
PIP = [PY, "-m", "pip", "--disable-pip-version-check"]
VF03 = Path(os.environ.get("SE_GYM_VERIFIERS_VENV", "/var/tmp/se-gym-venvs/verifiers"))
OWN_VENVS = {  # the venvs scripts/setup/integrations.sh makes (reused when they hold the release)
    "verl": Path(os.environ.get("SE_GYM_VERL_VENV", str(VF03.parent / "verl"))),
    "verifiers-0.3": VF03,
    "verifiers-0.4": Path(os.environ.get("SE_GYM_VERIFIERS04_VENV", str(VF03.parent / "verifiers04"))),
    "gem": Path(os.environ.get("SE_GYM_GEM_VENV", str(VF03.parent / "gem"))),
    "nemo-gym": Path(os.environ.get("SE_GYM_NEMO_GYM_VENV", "/var/tmp/se-gym-venvs/nemo-gym")),
}
# stack -> (distribution, where its requirement comes from: an extra of pyproject.toml, or a pin)
STACKS = {
    "trl": ("trl", "extra:trl"),
    "verl": ("verl", "extra:verl"),
    "skyrl-gym": ("skyrl-gym", "extra:skyrl"),
    "openenv": ("openenv-core", "extra:openenv"),
    "verifiers-0.3": ("verifiers", "pin:verifiers==0.3.1"),  # the classic API's series (the extra allows it)
    "verifiers-0.4": ("verifiers", "extra:verifiers"),
    "nemo-gym": ("nemo-gym", "pin:nemo-gym==0.7.0"),  # scripts/setup/integrations.sh's pin (no extra)
    "gem": ("gem-llm", "pin:gem-llm==0.1.0"),
    "ray": ("ray", "extra:ray"),
}
PY313_STACKS = {"nemo-gym"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement(stack: str) -> str:
    dist, src = STACKS[stack]
    kind, _, what = src.partition(":")
    if kind == "pin":
        return what
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"][what]
    for req in extras:
        if _norm(re.split(r"[\[<>=!~ ;]", req, maxsplit=1)[0]) == _norm(dist):
            return req
    raise SystemExit(f"compat: the extra [{what}] names no {dist}")


def resolved_version(stack: str) -> str:
    req = requirement(stack)
    m = re.fullmatch(r"[\w.-]+==([\w.]+)", req)
    if m:
        return m.group(1)
    out = subprocess.run([*PIP, "install", "--dry-run", "--quiet", "--ignore-installed", "--no-deps", "--report", "-", req],
                         capture_output=True, text=True, timeout=300)
    if out.returncode:
        raise SystemExit(f"compat: pip cannot resolve {req}: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout)["install"][0]["metadata"]["version"]


def newest_version(stack: str) -> str:
    dist = STACKS[stack][0]
    extra = ["--python-version", "3.13.14"] if stack in PY313_STACKS else []
    out = subprocess.run([*PIP, "index", "versions", dist, *extra], capture_output=True, text=True, timeout=300)
    m = re.search(r"Available versions: (.*)", out.stdout)
    if not m:
        raise SystemExit(f"compat: the index lists no {dist}: {out.stderr.strip()[-300:]}")
    versions = [v.strip() for v in m.group(1).split(",")]
    if stack == "verifiers-0.3":  # the newest of the series this column is about
        versions = [v for v in versions if v.startswith("0.3.")]
    return versions[0]


def _installed(python: Path, dist: str) -> str | None:
    out = subprocess.run([str(python), "-c", f"from importlib.metadata import version; print(version({dist!r}))"],
                         capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def _python313() -> str:
    cands = [os.environ.get("SE_GYM_PYTHON313", ""), "python3.13",
             *sorted(str(p) for p in Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")).glob("versions/3.13*/bin/python3.13"))]
    for c in filter(None, cands):
        if subprocess.run([c, "-c", "import sys; assert sys.version_info[:2] == (3, 13)"], capture_output=True).returncode == 0:
            return c
    raise SystemExit("compat: NeMo Gym needs Python 3.13 and none was found (set SE_GYM_PYTHON313)")


def build(stack: str, version: str, root: Path) -> tuple[Path, str]:
    """A new venv under ``root`` holding ``stack`` at ``version``; returns (its python, how it was made)."""
    dist = STACKS[stack][0]
    venv = root / f"{stack}-{version}"
    python = venv / "bin" / "python"
    if python.exists() and _installed(python, dist) == version:
        return python, f"reused {venv}"
    subprocess.run(["rm", "-rf", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if stack in PY313_STACKS:
        subprocess.run([_python313(), "-m", "venv", str(venv)], check=True)
        cmd = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--ignore-requires-python",
               f"{dist}=={version}", "numpy>=2", "gymnasium>=1.4,<1.5", "tqdm>=4.60"]
    else:
        subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True)
        own = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
        parents = [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]
        (own / "_se_gym_parent_site.pth").write_text("".join(f"{p}\n" for p in parents))
        cmd = [*PIP, "--python", str(python), "install", "--quiet", f"{dist}=={version}"]
        if stack.startswith("verifiers"):  # as integrations.sh: keep torch, transformers and numpy as they are
            pins = venv / "pins.txt"
            pins.write_text(subprocess.run([PY, "-c", "import torch, transformers, numpy; print(f'torch=={torch.__version__}');"
                                            "print(f'transformers=={transformers.__version__}'); print(f'numpy=={numpy.__version__}')"],
                                           capture_output=True, text=True, check=True).stdout)
            cmd += ["-c", str(pins)]
    got = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if got.returncode or _installed(python, dist) != version:
        raise RuntimeError(f"could not install {dist}=={version}: {got.stderr.strip()[-800:]}")
    return python, f"built {venv}"


def venv_for(stack: str, version: str, root: Path, fresh: bool) -> tuple[Path, str]:
    dist = STACKS[stack][0]
    if not fresh:
        cands = [OWN_VENVS[stack] / "bin" / "python"] if stack in OWN_VENVS else [Path(PY)]
        cands.append(root / f"{stack}-{version}" / "bin" / "python")
        for python in cands:
            if python.exists() and _installed(python, dist) == version:
                return python, f"reused {python.parent.parent}"
    return build(stack, version, root)


def smoke(stack: str, python: Path, work: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", OPENAI_API_KEY="none")
    t0 = time.perf_counter()
    proc = subprocess.run([str(python), str(REPO / "scripts" / "compat_smoke.py"), stack, str(work)], capture_output=True,
                          text=True, env=env, timeout=1800)
    seconds = time.perf_counter() - t0
    line = (proc.stdout.strip().splitlines() or ["{}"])[-1]
    try:
        res = json.loads(line)
    except json.JSONDecodeError:
        res = {"ok": False, "detail": (proc.stderr or proc.stdout)[-600:]}
    res["seconds"] = round(seconds, 1)
    return res


def run_column(column: str, stacks: list[str], root: Path, fresh: bool, reuse_from: dict | None = None) -> list[dict]:
    rows = []
    for stack in stacks:
        row = {"stack": stack, "column": column, "requirement": requirement(stack)}
        try:
            version = resolved_version(stack) if column == "resolved" else newest_version(stack)
            row["version"] = version
            same = (reuse_from or {}).get(stack)
            t0 = time.perf_counter()
            if same and same.get("version") == version and same.get("python"):
                python, how = Path(same["python"]), "the resolved column's venv (the same release)"
            else:
                python, how = venv_for(stack, version, root, fresh)
            row.update(python=str(python), venv=how, build_s=round(time.perf_counter() - t0, 1))
            res = smoke(stack, python, root / "work" / f"{column}-{stack}")
            if not (res.get("ok") and res.get("version") == version):
                # once more, saying why the first try failed: a failure that does not come back is the
                # machine's (a port, a load spike), one that does is the release's
                print(f"compat {column}: {stack} {version}: first try failed, once more: {res.get('detail')}", flush=True)
                row["first_try"] = res.get("detail")
                res = smoke(stack, python, root / "work" / f"{column}-{stack}-2")
            row.update(ok=bool(res.get("ok")) and res.get("version") == version, detail=res.get("detail"), seconds=res["seconds"],
                       ran=res.get("version"))
        except (RuntimeError, SystemExit, subprocess.SubprocessError) as exc:
            row.update(ok=False, detail=str(exc)[-600:], seconds=None)
        row["load"] = round(os.getloadavg()[0], 1)
        rows.append(row)
        mark = ("ok" + (" on the second try" if "first_try" in row else "")) if row["ok"] else "FAILED"
        print(f"compat {column}: {stack} {row.get('version', '?')}: {mark} ({row.get('seconds')} s; {row.get('venv', '')})"
              + ("" if row["ok"] else f": {row.get('detail')}"), flush=True)
    return rows


def table(rows: list[dict], date: str) -> str:
    lines = ["| stack | requirement | version | result | smoke (s) | venv |", "|---|---|---|---|---|---|"]
    for r in rows:
        if r["ok"]:
            result = "pass: " + json.dumps(r["detail"], sort_keys=True).replace("|", "/")
            if r.get("first_try") is not None:
                result += " (second try; the first: " + str(r["first_try"]).replace("\n", " ").replace("|", "/")[:200] + ")"
        else:
            result = "FAIL: " + str(r["detail"]).replace("\n", " ").replace("|", "/")[:300]
        venv = r.get("venv", "").replace(str(Path.home()), "~")
        venv = re.sub(r"^(reused|built) (.*)/([^/]+)$", r"\1 \3", venv)
        if venv.startswith("built") and r.get("build_s") is not None:
            venv += f" in {r['build_s']:.0f} s"
        lines.append(f"| {r['stack']} | `{r['requirement']}` | {r.get('version', '?')} | {result} | {r.get('seconds')} | {venv} |")
    loads = [r["load"] for r in rows if r.get("load") is not None] or [os.getloadavg()[0]]
    lines.append("")
    lines.append(f"Run on {date} by `scripts/compat.sh`, Python {sys.version.split()[0]} (NeMo Gym: 3.13), on a shared 2-core "
                 f"machine (load {min(loads):.0f} to {max(loads):.0f} during the run): times are for reading, not comparing.")
    return "\n".join(lines)


def write_section(doc: Path, column: str, text: str) -> None:
    begin, end = f"<!-- compat:{column}:begin -->", f"<!-- compat:{column}:end -->"
    body = doc.read_text(encoding="utf-8") if doc.exists() else ""
    block = f"{begin}\n{text}\n{end}"
    if begin in body and end in body:
        body = body[: body.index(begin)] + block + body[body.index(end) + len(end):]
    else:
        body = body.rstrip() + f"\n\n{block}\n"
    doc.write_text(body, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/compat.sh", description=__doc__.split("\n\n")[0])
    ap.add_argument("--newest", action="store_true", help="also the newest release on the index of each stack")
    ap.add_argument("--fresh", action="store_true", help="build every venv anew (default: reuse one that holds the release)")
    ap.add_argument("--only", default="", help="comma-separated stacks (default: all): " + ", ".join(STACKS))
    ap.add_argument("--dir", default=os.environ.get("SE_GYM_COMPAT_DIR", "/var/tmp/se-gym-compat"), help="where built venvs go")
    ap.add_argument("--out", default=str(REPO / "docs" / "integrations" / "compatibility.md"), help="the table's file")
    ap.add_argument("--json", default=None, help="also write the rows as JSON here")
    ap.add_argument("--render", default=None, metavar="JSON", help="write the tables of rows saved by --json (runs nothing)")
    args = ap.parse_args(argv)
    if args.render:
        saved = json.loads(Path(args.render).read_text())
        date = datetime.date.fromtimestamp(Path(args.render).stat().st_mtime).isoformat()
        for column in ("resolved", "newest"):
            rows = [r for r in saved if r["column"] == column]
            if rows:
                write_section(Path(args.out), column, table(rows, date))
        return 0
    stacks = [s for s in args.only.split(",") if s] or list(STACKS)
    bad = [s for s in stacks if s not in STACKS]
    if bad:
        raise SystemExit(f"compat: unknown stack {bad[0]!r} (known: {', '.join(STACKS)})")
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    date = datetime.date.today().isoformat()
    rows = run_column("resolved", stacks, root, args.fresh)
    out = Path(args.out)
    write_section(out, "resolved", table(rows, date))
    all_rows = list(rows)
    if args.newest:
        newest = run_column("newest", stacks, root, args.fresh, reuse_from={r["stack"]: r for r in rows})
        write_section(out, "newest", table(newest, date))
        all_rows += newest
    if args.json:
        Path(args.json).write_text(json.dumps(all_rows, indent=1))
    failed = [f"{r['column']}/{r['stack']}" for r in all_rows if not r["ok"]]
    print(f"compat: {len(all_rows) - len(failed)} of {len(all_rows)} passed" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
