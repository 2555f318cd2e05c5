"""``se-gym bench`` (run agents under the protocol), ``se-gym bench report`` (the leaderboard) and
``se-gym bench verify`` (re-check a report against its run folders)."""
from __future__ import annotations

import argparse
import sys

from ..configs import add_config_arguments, config_from_args
from .config import BenchConfig


def _prices(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--price-prompt", type=float, default=None, metavar="USD",
                        help="US dollars per million prompt tokens (adds the dollar column)")
    parser.add_argument("--price-completion", type=float, default=None, metavar="USD",
                        help="US dollars per million generated tokens (adds the dollar column)")


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser, BenchConfig, exclude=("agent", "agent_option", "agent_options", "library"))
    parser.add_argument("--agent", dest="agent", action="append", default=argparse.SUPPRESS,
                        help=BenchConfig.__dataclass_fields__["agent"].metadata["help"])
    parser.add_argument("--agent-option", dest="agent_option", action="append", default=argparse.SUPPRESS, metavar="[LABEL/]KEY=VALUE",
                        help=BenchConfig.__dataclass_fields__["agent_option"].metadata["help"])
    sub = parser.add_subparsers(dest="bench_command", metavar="{report,verify}")
    rep = sub.add_parser("report", help="one leaderboard (Markdown, JSON, plots) over bench run folders",
                         description="one leaderboard (Markdown, JSON, plots) over bench run folders")
    rep.add_argument("runs", nargs="+", metavar="RUN_DIR", help="folders written by se-gym bench --out")
    rep.add_argument("--out", dest="report_out", default="leaderboard.md",
                     help="the Markdown file; .json, .png and _pareto.png beside it (default: leaderboard.md)")
    _prices(rep)
    rep.set_defaults(func=run_report)
    ver = sub.add_parser("verify", help="re-check a report (its .json) against its run folders",
                         description="re-check a report (the .json of se-gym bench report, or a season's) against its run folders: "
                                     "the leaderboard recomputed, the judged answers, the memory digests, the agents' code; with --secret, "
                                     "a season's commitment and libraries")
    ver.add_argument("report", metavar="REPORT", help="the report's .json (or its .md, with the .json beside it)")
    ver.add_argument("--run", dest="verify_runs", action="append", default=[], metavar="RUN_DIR",
                     help="a run folder, if it moved since the report (repeatable, in the report's order)")
    ver.add_argument("--secret", default=None, help="a season's secret, once revealed (or env:NAME, file:PATH)")
    ver.set_defaults(func=run_verify)
    parser.set_defaults(func=run)


def _hide(secret: str) -> None:
    """Blank the secret in this process's argument list (agents run in this process)."""
    sys.argv[:] = [("***" if a == secret else a.replace(secret, "***")) for a in sys.argv]


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from .agents import agent_specs
    from .report import render, summarize_runs, write
    from .run import Bench, resolve
    from .season import resolve_secret

    config = config_from_args(BenchConfig, args)
    if config.season is not None:
        given = config.season
        config = replace(config, season=resolve_secret(given))
        _hide(given)
        _hide(config.season)
    config, defaults = resolve(config)
    specs = agent_specs(config.agent, config.agent_option, config.agent_options, defaults)
    Bench(config, specs).run()
    prices = _price_map(config.price_prompt, config.price_completion)
    if config.season is not None:
        path = f"{config.out}/season_report.md"
        write([config.out], path, prices)
        print(open(path, encoding="utf-8").read(), end="")
        print(f"\nthe season's report, publishable (no secret, no seed in it): {path} and its .json; "
              f"se-gym bench verify {path[:-3]}.json re-checks it against {config.out}")
        return 0
    print(render(summarize_runs([config.out], prices)), end="")
    print(f"\nrun folder: {config.out} (se-gym bench report {config.out} --out leaderboard.md)")
    return 0


def _price_map(prompt: float | None, completion: float | None) -> dict | None:
    if prompt is None and completion is None:
        return None
    return {"prompt": prompt or 0.0, "completion": completion or 0.0}


def run_report(args: argparse.Namespace) -> int:
    from .report import write

    summary = write(args.runs, args.report_out, _price_map(args.price_prompt, args.price_completion))
    print(open(args.report_out, encoding="utf-8").read(), end="")
    plots = [p for p in (summary["plot"], summary["pareto_plot"]) if p]
    print(f"\nwrote {args.report_out}, {args.report_out.rsplit('.', 1)[0]}.json" + "".join(f", {p}" for p in plots))
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from .season import resolve_secret
    from .verify import verify

    secret = resolve_secret(args.secret) if args.secret is not None else None
    if args.secret is not None:
        _hide(args.secret)
    lines = verify(args.report, args.verify_runs, secret)
    print("\n".join(lines))
    bad = sum(ln.startswith("MISMATCH") for ln in lines)
    print(f"\n{'verified' if not bad else f'{bad} mismatch(es)'}: {args.report}")
    return 1 if bad else 0
