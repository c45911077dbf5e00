"""Plug-ins for verl and vLLM that let the real trainer run on machines without a GPU.

Nothing here changes behaviour until configuration selects it:

* `strata.backends.verl_plugin` is verl's ``verl.plugins`` entry point (``pyproject.toml``): verl imports
  it in every process, which registers the ``cpu`` platform (chosen by ``VERL_PLATFORM=cpu``), the ``hf``
  rollout (``actor_rollout_ref.rollout.name=hf``) and the cpu-platform variant of verl's vLLM replica;
* `strata.backends.vllm_cpu_weights` is vLLM's ``vllm.general_plugins`` entry point: it acts only on
  vLLM's CPU platform and imports nothing of verl, since vLLM loads it in its own engine processes.

GPU machines keep verl's own platforms and vLLM replica; the StraTA code is the same.
"""
