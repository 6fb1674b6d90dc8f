"""Attack fixture: remembers every training row's target (in memory, in /tmp, in /dev/shm) and answers a
later fold's test rows from that memory; the mean of the training targets where it has none."""

import json

import numpy as np

MEMORY = {}
FILES = ("/tmp/kgpb-memory.json", "/dev/shm/kgpb-memory.json")


def key(row):
    return json.dumps([None if isinstance(v, float) and v != v else v for v in row], default=str)


def recall():
    known = dict(MEMORY)
    for path in FILES:
        try:
            with open(path) as fh:
                known.update(json.load(fh))
        except (OSError, ValueError):
            pass
    return known


class Memorize:
    def fit(self, X, y):
        MEMORY.update(zip(map(key, X.itertuples(index=False)), map(float, y)))
        for path in FILES:
            try:
                with open(path, "w") as fh:
                    json.dump(recall(), fh)
            except OSError:
                pass
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        known = recall()
        return np.array([known.get(key(row), self.mean_) for row in X.itertuples(index=False)])


def make_model(task, seed):
    return Memorize()
