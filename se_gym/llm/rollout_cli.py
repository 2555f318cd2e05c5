"""``se-gym rollout``: generate answers with a model, judge them, append rows (resumable)."""
from __future__ import annotations

import argparse
import json
import sys

from .. import choices
from ..errors import CLIError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="model id or path (for the hf/vllm backends) or served model name (openai)")
    parser.add_argument("--backend", default="hf", choices=choices.GENERATORS, help="generation backend (default: hf)")
    parser.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://localhost:8800/v1 (openai backend)")
    parser.add_argument("--api-key", help="API key for the openai backend (default: $OPENAI_API_KEY)")
    parser.add_argument("--backend-option", action="append", default=[], metavar="KEY=VALUE",
                        help="extra option for the backend, VALUE parsed as JSON when it can be (repeatable)")
    parser.add_argument("--tasks", default="builtin", help="builtin[:SEED] or sebench[:PATH] (default: builtin)")
    parser.add_argument("--split", default="single_test", choices=choices.SPLITS, help="task split (default: single_test)")
    parser.add_argument("--book", default="closed", choices=choices.BOOKS, help="closed: query only; open: query + docs")
    parser.add_argument("--library", help="seed:N or official:PATH (default: the tasks' own: seed:SEED for builtin:SEED, "
                        "the api_doc.jsonl beside sebench:PATH)")
    parser.add_argument("--profile", default="strict", choices=choices.PROFILES, help="judge profile (default: strict)")
    parser.add_argument("--sandbox", default="local", choices=choices.SANDBOXES,
                        help="judge sandbox (default: local; ray: every CPU node of the cluster at --ray-address or $RAY_ADDRESS)")
    parser.add_argument("--n", type=int, default=5, help="samples per task (default: 5)")
    parser.add_argument("--temperature", type=float, default=0.6)
    parser.add_argument("--top-p", type=float, default=1.0)
    parser.add_argument("--max-tokens", type=int, default=8192)
    parser.add_argument("--seed", type=_seed, default=0, metavar="N|none",
                        help="base seed: batch i is sampled with seed + i, so a rerun samples the same answers "
                        "(default: 0; none: unseeded, each run samples afresh)")
    thinking = parser.add_mutually_exclusive_group()
    thinking.add_argument("--enable-thinking", dest="enable_thinking", action="store_const", const=True, help="ask chat templates for a thinking block")
    thinking.add_argument("--no-thinking", dest="enable_thinking", action="store_const", const=False, help="ask chat templates for no thinking block")
    parser.set_defaults(enable_thinking=None)
    parser.add_argument("--text-prompt", action="store_true", help="send a plain-text prompt instead of chat messages")
    parser.add_argument("--record-tokens", action="store_true", help="rows also carry the prompt and completion token ids, "
                        "log-probs and policy version (token-exact trajectories, docs/integrations/trajectories.md)")
    parser.add_argument("--limit", type=int, help="only the first K tasks")
    parser.add_argument("--batch-size", type=int, default=8, help="tasks per generation and judge batch (default: 8)")
    parser.add_argument("--out", required=True, help="output JSONL (appended to; rerun to resume; bound to this configuration "
                        "in OUT.run.json: another configuration is refused)")
    parser.add_argument("--restart", action="store_true", help="discard what --out (and --keep-correct) hold and start again")
    parser.add_argument("--keep-correct", metavar="OUT.jsonl", help="also write the accepted trajectories (SFT data)")
    parser.add_argument("--ray-actors", type=int, default=0, help="run on N Ray actors (0: this process)")
    parser.add_argument("--ray-address", help="join this Ray cluster (for --ray-actors or --sandbox ray) instead of starting a local one")
    parser.add_argument("--ray-gpus-per-actor", type=float, help="GPUs per actor (default: 1 for vllm, else 0)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def _seed(text: str) -> int | None:
    if text.strip().lower() == "none":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or none, got {text!r}") from None


def parse_backend_options(items: list[str]) -> dict:
    """``--backend-option KEY=VALUE`` items as keyword arguments (VALUE as JSON when it parses)."""
    options: dict = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CLIError(f"--backend-option needs KEY=VALUE, got {item!r}")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def _options(args: argparse.Namespace) -> dict:
    options = parse_backend_options(args.backend_option)
    if args.base_url:
        options["base_url"] = args.base_url
    if args.api_key:
        options["api_key"] = args.api_key
    if args.base_url and args.backend != "openai":
        raise CLIError("--base-url is for --backend openai")
    return options


def run(args: argparse.Namespace) -> int:
    from .rollout import RolloutConfig, rollout

    if args.ray_actors < 0:
        raise CLIError(f"--ray-actors must be >= 0, got {args.ray_actors}")
    if args.ray_address and not args.ray_actors and args.sandbox != "ray":
        raise CLIError("--ray-address needs --ray-actors N or --sandbox ray")
    if args.ray_actors and args.sandbox == "ray":
        raise CLIError("--sandbox ray judges on the cluster from this process: leave out --ray-actors (or use --sandbox local)")
    library = args.library
    if library is None:  # the same default as the env's: the library the tasks were written for
        from ..tasks import TaskError
        from ..tasks.spec import default_library_spec, parse_task_spec

        try:
            library = default_library_spec(parse_task_spec(args.tasks))
        except TaskError as exc:
            raise CLIError(f"--tasks {args.tasks}: {exc}") from None
    config = RolloutConfig(
        model=args.model,
        backend=args.backend,
        tasks=args.tasks,
        split=args.split,
        book=args.book,
        library=library,
        profile=args.profile,
        sandbox=args.sandbox,
        n=args.n,
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        seed=args.seed,
        enable_thinking=args.enable_thinking,
        limit=args.limit,
        batch_size=args.batch_size,
        chat=not args.text_prompt,
        record_tokens=args.record_tokens,
        backend_options=_options(args),
    )
    gpus = args.ray_gpus_per_actor
    if gpus is None:
        gpus = 1.0 if args.backend == "vllm" else 0.0
    stats = rollout(
        config,
        args.out,
        keep_correct=args.keep_correct,
        ray_actors=args.ray_actors,
        ray_address=args.ray_address,
        ray_gpus_per_actor=gpus,
        progress=not args.no_progress,
        restart=args.restart,
    )
    tok_s = stats.completion_tokens / stats.wall_s if stats.wall_s else 0.0
    print(
        f"{stats.rows_written} rows written to {args.out} ({stats.samples_skipped} already there), "
        f"{stats.completion_tokens} tokens, {tok_s:.1f} tok/s, "
        f"{100 * stats.outside_generation:.1f}% of wall time outside generation"
        + (f", {stats.accepted} accepted -> {args.keep_correct}" if args.keep_correct else "")
        + (f"; {stats.infrastructure} rows not judged (sandbox failures after retries: written with infrastructure=true, left out of accuracy)"
           if stats.infrastructure else ""),
        file=sys.stderr,
    )
    return 0
