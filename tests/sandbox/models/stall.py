"""Attack fixture: predict() leaves a setsid grandchild holding the output pipes, then never returns."""

import os
import time


class Stall:
    def fit(self, X, y):
        return self

    def predict(self, X):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                print(f"grandchild {os.getpid()}", flush=True)
                time.sleep(300)
            os._exit(0)
        time.sleep(600)


def make_model(task, seed):
    return Stall()
