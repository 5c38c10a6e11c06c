"""An elastic training script whose hosts change through hvdrun's host discovery (tests/python/
elastic_discovery.sh and the cluster tests run it): at step 50 of round 0, rank 0 rewrites the discovery
script's hosts file ($ELASTIC_TEST_HOSTS_FILE) to the hosts in $ELASTIC_TEST_NEW_HOSTS. hvdrun starts a rank on
a host added (or removes the ranks of a host gone), and the ranks re-form at their next commit
(HostsUpdatedInterrupt): the new rank gets the state from rank 0, a removed one exits 0 in hvd.init(). Each
rank that trains to the end prints one line (elastic_training.py). It exits 1 unless it ran every step,
ends with rank 0's parameters and committed each sample once, in round 1 with $ELASTIC_TEST_SIZE ranks,
having reset once (a rank started in round 1: never)."""

import os
import sys

import hvdrun
import hvdrun.torch as hvd
from elastic_training import ElasticTraining

training = ElasticTraining()


def change_hosts():
    """Replaces the hosts file at once: the discovery script never reads half of it."""
    path = os.environ["ELASTIC_TEST_HOSTS_FILE"]
    with open(path + ".new", "w", encoding="ascii") as hosts:
        hosts.write("\n".join(os.environ["ELASTIC_TEST_NEW_HOSTS"].split()) + "\n")
    os.replace(path + ".new", path)


def after_step(state):
    if state.step == 50 and hvd.rank() == 0 and hvdrun._C.round() == 0:
        change_hosts()


training.train(after_step)
size = int(os.environ["ELASTIC_TEST_SIZE"])
expected_resets = [] if os.environ["HVDRUN_ROUND"] == "1" else [size]
if not training.finish(hvdrun._C.round() == 1 and hvd.size() == size and training.resets == expected_resets):
    sys.exit(1)
