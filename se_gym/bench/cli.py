"""``se-gym bench`` (run agents under the protocol) and ``se-gym bench report`` (the leaderboard)."""
from __future__ import annotations

import argparse

from ..configs import add_config_arguments, config_from_args
from .config import BenchConfig


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser, BenchConfig, exclude=("agent", "agent_option", "agent_options"))
    parser.add_argument("--agent", dest="agent", action="append", default=argparse.SUPPRESS,
                        help=BenchConfig.__dataclass_fields__["agent"].metadata["help"])
    parser.add_argument("--agent-option", dest="agent_option", action="append", default=argparse.SUPPRESS, metavar="[LABEL/]KEY=VALUE",
                        help=BenchConfig.__dataclass_fields__["agent_option"].metadata["help"])
    sub = parser.add_subparsers(dest="bench_command", metavar="report")
    rep = sub.add_parser("report", help="one leaderboard (Markdown, JSON, plot) over bench run folders",
                         description="one leaderboard (Markdown, JSON, plot) over bench run folders")
    rep.add_argument("runs", nargs="+", metavar="RUN_DIR", help="folders written by se-gym bench --out")
    rep.add_argument("--out", dest="report_out", default="leaderboard.md", help="the Markdown file; .json and .png beside it (default: leaderboard.md)")
    rep.set_defaults(func=run_report)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .agents import agent_specs
    from .report import collect, render, summarize
    from .run import Bench, resolve

    config, defaults = resolve(config_from_args(BenchConfig, args))
    specs = agent_specs(config.agent, config.agent_option, config.agent_options, defaults)
    Bench(config, specs).run()
    print(render(summarize(collect([config.out]))), end="")
    print(f"\nrun folder: {config.out} (se-gym bench report {config.out} --out leaderboard.md)")
    return 0


def run_report(args: argparse.Namespace) -> int:
    from .report import write

    summary = write(args.runs, args.report_out)
    print(open(args.report_out, encoding="utf-8").read(), end="")
    print(f"\nwrote {args.report_out}, {args.report_out.rsplit('.', 1)[0]}.json" + (f", {summary['plot']}" if summary["plot"] else ""))
    return 0
