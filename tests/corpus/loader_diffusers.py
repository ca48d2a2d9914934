"""diffusers surfaces of the loader map (app/core/loaders/map/diffusers.yaml). Inert text only.

Read from the diffusers 0.42.1 wheel:
- ``pipeline_loading_utils.get_class_obj_and_candidates``: a component ``[library, Class]`` whose folder has
  ``<component>/<library>.py`` is imported through ``get_class_from_dynamic_module`` (trust_remote_code); any
  other library name is only looked up (``_get_library_or_raise``), never imported because the repo names it.
- ``DiffusionPipeline.download``: ``_class_name: [module, Class]`` without ``module.py`` in the repo becomes
  ``custom_pipeline``; ``dynamic_modules_utils.get_cached_module_file`` then fetches ``org/name``'s pipeline.py
  (trust_remote_code) or, for a bare name, ``<rev>/<name>.py`` of the diffusers/community-pipelines-mirror
  dataset with no trust_remote_code check.
- ``ModularPipelineBlocks.from_pretrained``: ``modular_config.json`` ``auto_map`` imports ``module.py``.
- ``_update_init_kwargs_with_connected_pipeline``: a combined pipeline loads the card's ``prior:`` repo with
  the caller's kwargs (``kwargs_copied`` keeps trust_remote_code).
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "loader-diffusers"
PAYLOAD = "echo hfvet-test"


def _json(value: object) -> bytes:
    return json.dumps(value, indent=2).encode()


def _index(**components: object) -> bytes:
    return _json({"_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.42.1", **components})


_SCHEDULER = ["diffusers", "EulerDiscreteScheduler"]
_VAE = ["diffusers", "AutoencoderKL"]


def component_init_spawns() -> dict[str, bytes]:
    unet = ("import os\n\nfrom diffusers import ModelMixin, ConfigMixin\nfrom diffusers.configuration_utils import "
            "register_to_config\n\n\nclass MyUNet(ModelMixin, ConfigMixin):\n    @register_to_config\n"
            "    def __init__(self, channels=4):\n        super().__init__()\n"
            f"        os.system({PAYLOAD!r})\n")
    return {"model_index.json": _index(unet=["my_unet", "MyUNet"], vae=_VAE, scheduler=_SCHEDULER),
            "unet/my_unet.py": unet.encode(), "unet/config.json": _json({"_class_name": "MyUNet", "channels": 4})}


def vendor_custom_transformer() -> dict[str, bytes]:
    # The documented custom-component layout: transformer/<module>.py next to its config and weights.
    module = ("import torch\nfrom torch import nn\nfrom diffusers import ModelMixin, ConfigMixin\n"
              "from diffusers.configuration_utils import register_to_config\n\n\n"
              "class TinyDiT(ModelMixin, ConfigMixin):\n    @register_to_config\n"
              "    def __init__(self, hidden_size=8, in_channels=4):\n        super().__init__()\n"
              "        self.proj_in = nn.Linear(in_channels, hidden_size)\n"
              "        self.proj_out = nn.Linear(hidden_size, in_channels)\n\n"
              "    def forward(self, hidden_states, timestep=None, encoder_hidden_states=None):\n"
              "        return self.proj_out(torch.nn.functional.silu(self.proj_in(hidden_states)))\n")
    return {"model_index.json": _json({"_class_name": "DiTPipeline", "_diffusers_version": "0.42.1",
                                       "transformer": ["transformer_tinydit", "TinyDiT"], "vae": _VAE,
                                       "scheduler": ["diffusers", "KarrasDiffusionSchedulers"]}),
            "transformer/transformer_tinydit.py": module.encode(),
            "transformer/config.json": _json({"_class_name": "TinyDiT", "hidden_size": 8}),
            "scheduler/scheduler_config.json": _json({"_class_name": "EulerDiscreteScheduler"})}


def class_name_other_repo() -> dict[str, bytes]:
    return {"model_index.json": _json({"_class_name": ["someone/fast-pipes", "FastPipeline"],
                                       "_diffusers_version": "0.42.1", "unet": ["diffusers", "UNet2DConditionModel"],
                                       "scheduler": _SCHEDULER})}


_PIPELINE = ("import torch\nfrom diffusers import DiffusionPipeline\n\n\nclass {name}(DiffusionPipeline):\n"
             "    def __init__(self, unet, scheduler):\n        super().__init__()\n"
             "        self.register_modules(unet=unet, scheduler=scheduler)\n\n"
             "    @torch.no_grad()\n    def __call__(self, batch_size=1, num_inference_steps=25):\n"
             "        sample = torch.randn(batch_size, self.unet.config.in_channels, 32, 32)\n"
             "        self.scheduler.set_timesteps(num_inference_steps)\n"
             "        for t in self.scheduler.timesteps:\n"
             "            sample = self.scheduler.step(self.unet(sample, t).sample, t, sample).prev_sample\n"
             "        return sample\n")


def vendor_class_name_local() -> dict[str, bytes]:
    return {"model_index.json": _json({"_class_name": ["pipeline_tiny", "TinyPipeline"], "_diffusers_version": "0.42.1",
                                       "unet": ["diffusers", "UNet2DModel"], "scheduler": _SCHEDULER}),
            "pipeline_tiny.py": _PIPELINE.format(name="TinyPipeline").encode()}


def pipeline_file_call_spawns() -> dict[str, bytes]:
    code = ("import subprocess\nfrom diffusers import DiffusionPipeline\n\n\nclass Pipe(DiffusionPipeline):\n"
            "    def __init__(self, unet, scheduler):\n        super().__init__()\n"
            "        self.register_modules(unet=unet, scheduler=scheduler)\n\n"
            "    def __call__(self, prompt):\n"
            f"        subprocess.run({PAYLOAD!r}, shell=True)\n        return prompt\n")
    return {"pipeline.py": code.encode()}


def vendor_pipeline_file() -> dict[str, bytes]:
    card = ("# Tiny DDPM pipeline\n\n```python\nfrom diffusers import DiffusionPipeline\n"
            "pipe = DiffusionPipeline.from_pretrained(\"nvidia/tiny-ddpm\", custom_pipeline=\"nvidia/tiny-ddpm\", "
            "trust_remote_code=True)\n```\n")
    return {"pipeline.py": _PIPELINE.format(name="TinyDDPMPipeline").encode(), "README.md": card.encode()}


def card_custom_pipeline_other_repo() -> dict[str, bytes]:
    card = ("# Fast SDXL\n\n```python\nfrom diffusers import DiffusionPipeline\n"
            "pipe = DiffusionPipeline.from_pretrained(\"stabilityai/stable-diffusion-xl-base-1.0\",\n"
            "    custom_pipeline=\"speed-hacks/sdxl-turbo-pipe\", trust_remote_code=True)\n```\n")
    return {"README.md": card.encode()}


def vendor_card_community_pipeline() -> dict[str, bytes]:
    # The documented community-pipeline usage (diffusers docs, "Community pipelines").
    card = ("---\nlicense: openrail++\nlibrary_name: diffusers\n---\n# Long prompts\n\n```python\n"
            "from diffusers import DiffusionPipeline\n"
            "pipe = DiffusionPipeline.from_pretrained(\"stabilityai/stable-diffusion-2-1\",\n"
            "    custom_pipeline=\"lpw_stable_diffusion\")\n```\n")
    return {"README.md": card.encode()}


def modular_blocks_spawn() -> dict[str, bytes]:
    block = ("import os\nfrom diffusers.modular_pipelines import ModularPipelineBlocks\n\n"
             f"os.system({PAYLOAD!r})\n\n\nclass MyBlocks(ModularPipelineBlocks):\n    pass\n")
    config = {"_class_name": "MyBlocks", "auto_map": {"ModularPipelineBlocks": "block.MyBlocks"}}
    return {"modular_config.json": _json(config), "block.py": block.encode()}


def vendor_modular_blocks() -> dict[str, bytes]:
    block = ("import torch\nfrom diffusers.modular_pipelines import ModularPipelineBlocks, PipelineState, InputParam,"
             " OutputParam\n\n\nclass Brighten(ModularPipelineBlocks):\n    @property\n    def inputs(self):\n"
             "        return [InputParam(\"image\")]\n\n    @property\n    def intermediate_outputs(self):\n"
             "        return [OutputParam(\"image\")]\n\n    def __call__(self, components, state: PipelineState):\n"
             "        block_state = self.get_block_state(state)\n"
             "        block_state.image = torch.clamp(block_state.image * 1.1, 0, 1)\n"
             "        self.set_block_state(state, block_state)\n        return components, state\n")
    return {"modular_config.json": _json({"_class_name": "Brighten", "_diffusers_version": "0.42.1",
                                          "auto_map": {"ModularPipelineBlocks": "block.Brighten"}}),
            "block.py": block.encode()}


def connected_prior_other_org() -> dict[str, bytes]:
    card = "---\nlicense: apache-2.0\nprior:\n- prior-mods/kandinsky-prior-patched\n---\n# Kandinsky decoder\n"
    return {"README.md": card.encode(), "model_index.json": _json({"_class_name": "KandinskyV22CombinedPipeline",
                                                                   "_diffusers_version": "0.42.1"})}


def vendor_connected_prior() -> dict[str, bytes]:
    # kandinsky-community/kandinsky-2-2-decoder's shape: the decoder card names its prior; here a vendor's own.
    card = ("---\nlicense: apache-2.0\nprior:\n- nvidia/kandinsky-2-2-prior\ntags:\n- text-to-image\n"
            "- kandinsky\n---\n# Kandinsky 2.2 decoder\n")
    return {"README.md": card.encode(), "model_index.json": _json({
        "_class_name": "KandinskyV22Pipeline", "_diffusers_version": "0.42.1",
        "movq": ["diffusers", "VQModel"], "scheduler": ["diffusers", "DDPMScheduler"],
        "unet": ["diffusers", "UNet2DConditionModel"]})}


register_all([
    Case(FAMILY, "component-init-spawns", "hostile", component_init_spawns, rule="remote-code-dangerous",
         why="get_class_obj_and_candidates imports unet/my_unet.py (trust_remote_code), builds MyUNet: os.system runs"),
    Case(FAMILY, "class-name-other-repo", "hostile", class_name_other_repo, rule="third-party-unvetted-code-reference",
         why="download() takes _class_name[0] as custom_pipeline: someone/fast-pipes' pipeline.py runs, trusted"),
    Case(FAMILY, "pipeline-file-call-spawns", "hostile", pipeline_file_call_spawns, rule="remote-code-dangerous",
         why="custom_pipeline=<this repo> imports pipeline.py; every generation calls Pipe.__call__: a shell runs"),
    Case(FAMILY, "card-custom-pipeline-other-repo", "hostile", card_custom_pipeline_other_repo,
         rule="third-party-unvetted-code-reference",
         why="the card's custom_pipeline= runs speed-hacks/sdxl-turbo-pipe's pipeline.py with trust_remote_code"),
    Case(FAMILY, "modular-blocks-spawn", "hostile", modular_blocks_spawn, rule="remote-code-dangerous",
         why="ModularPipelineBlocks.from_pretrained imports block.py from auto_map: its module body runs os.system"),
    Case(FAMILY, "connected-prior-other-org", "hostile", connected_prior_other_org,
         rule="third-party-unvetted-code-reference",
         why="the combined pipeline loads the card's prior repo with the caller's kwargs, trust_remote_code included"),
    Case(FAMILY, "vendor-custom-transformer", "benign", vendor_custom_transformer, vendor="review",
         reason="remote-code-auto-map",
         why="a custom transformer in its component folder (diffusers docs, custom components): plain torch"),
    Case(FAMILY, "vendor-class-name-local", "benign", vendor_class_name_local, vendor="review",
         reason="remote-code-auto-map",
         why="_class_name naming the repo's own pipeline module: a plain denoising loop"),
    Case(FAMILY, "vendor-pipeline-file", "benign", vendor_pipeline_file, vendor="review", reason="remote-code-auto-map",
         why="the documented Hub custom pipeline: pipeline.py with one DiffusionPipeline subclass, card loads it"),
    Case(FAMILY, "vendor-card-community-pipeline", "benign", vendor_card_community_pipeline, vendor="review",
         reason="other-finding",
         why="a documented community pipeline: diffusers' own mirrored code, but outside the installed library"),
    Case(FAMILY, "vendor-modular-blocks", "benign", vendor_modular_blocks, vendor="review",
         reason="remote-code-auto-map",
         why="a custom modular block (diffusers docs, modular pipelines): clamps an image tensor"),
    Case(FAMILY, "vendor-connected-prior", "benign", vendor_connected_prior, vendor="approve",
         why="a decoder naming its prior in the same vendor org, as Kandinsky 2.2's card does"),
])
