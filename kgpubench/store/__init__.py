"""The store layer: rows become versioned, schema-checked configs.

Data flows one way through this folder: ``identity``/``shards``/``view`` (row identity, reading shard files and
writing one, the read-only view the metadata takes) -> ``validation`` (every violation of a row),
``card``/``card_figures``/``croissant`` (generated metadata) -> ``store`` (manifest, versions, transactional
merge), ``checks`` (``kgpubench validate``), ``bundle`` (the packaged data), ``hub`` (Hugging Face), ``upgrade``
(old stores to the current schema). Atomic writes and the writers' lock are the foundation's
(:mod:`kgpubench.foundation`); reading a config out (:func:`kgpubench.tasks.loading.load_dataset`) is the tasks
layer's. This ``__init__`` imports nothing, so that reading one module never loads the others.
"""
