"""SEBench-v0's OpenEnv server app, where OpenEnv's layout puts it.

    uvicorn server.app:app --port 8000                # from this folder; SE_GYM_OPENENV='{"max_turns": 2}'
    python -m se_gym_env.server.app --port 8000 --max-turns 2        # = se-gym serve openenv ...
    uv run --project . server --port 8000

``app`` is se_gym.integrations.openenv_app's (built on first access: the task suite takes seconds);
``main`` runs ``se-gym serve openenv`` with its flags.
"""
import sys


def __getattr__(name):
    if name == "app":
        from se_gym.integrations.openenv_app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv=None) -> int:
    from se_gym.cli import main as cli

    return cli(["serve", "openenv", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
