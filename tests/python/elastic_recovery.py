"""An elastic training script for tests/python/elastic_recovery_driver.cc, hvdrun's own elastic driver and the
cluster tests: trains a small model with hvd.elastic over an ElasticSampler (elastic_training.py), touches
$ELASTIC_TEST_PROGRESS once rank 2 is well into training (or, with ELASTIC_TEST_KILL_SELF=1, when hvdrun's
own elastic driver runs it, rank 2 SIGKILLs itself there), with $ELASTIC_TEST_FIRST_STEP writes into that file
the time (time.time()) at which rank 0's first step of a later round ended, and prints one line at the end
(elastic_training.py). It exits 1 unless it ran every step, ends with rank 0's parameters, committed each
sample once, and is in round $ELASTIC_TEST_ROUND with the reset sizes $ELASTIC_TEST_RESETS
(comma-separated)."""

import os
import signal
import sys
import time

import hvdrun
import hvdrun.torch as hvd
from elastic_training import ElasticTraining

training = ElasticTraining()
first_step = os.environ.get("ELASTIC_TEST_FIRST_STEP")


def write_first_step():
    with open(first_step + ".new", "w", encoding="ascii") as out:
        out.write("%.6f\n" % time.time())
    os.replace(first_step + ".new", first_step)


def after_step(state):
    if first_step and hvd.rank() == 0 and hvdrun._C.round() > 0 and not os.path.exists(first_step):
        write_first_step()
    if state.step == 50 and hvd.rank() == 2:
        if os.environ.get("ELASTIC_TEST_KILL_SELF") == "1":  # run by hvdrun: no driver kills it
            os.kill(os.getpid(), signal.SIGKILL)
        open(os.environ["ELASTIC_TEST_PROGRESS"], "w").close()


training.train(after_step)
expected_resets = [int(size) for size in os.environ["ELASTIC_TEST_RESETS"].split(",") if size]
if not training.finish(hvdrun._C.round() == int(os.environ["ELASTIC_TEST_ROUND"])
                       and training.resets == expected_resets):
    sys.exit(1)
