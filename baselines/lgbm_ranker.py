"""Learning to rank: LightGBM's ``LGBMRanker`` (lambdarank) over the configurations of each problem.

A query is one choice group (:func:`kgpubench.tasks.ranking.choice_groups`: same GPU, same problem); labels are
graded relevances (:func:`kgpubench.tasks.ranking.relevance`: the fastest configuration 30, one level less per
2 % slower). Queries above 2,000 rows are dealt into random parts drawn from ``seed`` (row and feature
subsampling also come from ``seed``). Outputs are scores, lowest = predicted fastest (``predicts_target = False``).
"""

from __future__ import annotations

from kgpubench.tasks.ranking import RankerModel


def make_model(task, seed):
    return RankerModel(task=task, library="lightgbm", random_state=seed)
