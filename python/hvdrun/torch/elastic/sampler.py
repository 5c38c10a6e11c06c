"""ElasticSampler: a dataset's indices split over the ranks of an elastic job, split again over the ranks
of each new round without repeating what the job has processed this epoch (Horovod's semantics)."""

import math
import random

import torch.utils.data


class ElasticSampler(torch.utils.data.Sampler):
    """As torch's DistributedSampler, and it remembers how many samples the job processed this epoch
    (record_batch), so that after a re-formation the rest of the epoch's indices, in the same shuffled
    order, are split over the new ranks. Keep it in the TorchState; call record_batch(batch_idx,
    batch_size) after each batch and set_epoch(epoch) at the end of each epoch.

    `dataset` must keep its length; `seed` must be the same on every rank."""

    def __init__(self, dataset, shuffle=True, seed=0):  # pylint: disable=super-init-not-called
        # torch's Sampler.__init__ takes the data source in some versions and warns of it in others.
        self.dataset = dataset
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0
        self.processed_num = 0
        self.num_replicas = 1
        self.rank = 0
        self.remaining_indices = []
        self.num_samples = 0
        self.total_size = 0
        self.indices = []
        self.reset()

    def set_epoch(self, epoch):
        """Starts `epoch` with nothing processed: call it at the end of an epoch, not at its start, so that a
        re-formation in the middle of an epoch does not process its first samples again."""
        self.epoch = epoch
        self.processed_num = 0
        self.reset()

    def record_batch(self, batch_idx, batch_size):
        """Counts a batch of `batch_size` samples on every rank as processed."""
        del batch_idx  # Horovod's signature
        self.processed_num += batch_size * self.num_replicas

    def state_dict(self):
        return {"epoch": self.epoch, "processed_num": self.processed_num}

    def load_state_dict(self, state_dict):
        self.epoch = state_dict["epoch"]
        self.processed_num = state_dict["processed_num"]
        self.reset()

    def reset(self):
        """Splits what is left of the epoch over the job's current ranks (hvd.size(), hvd.rank())."""
        from hvdrun import _C  # pylint: disable=import-outside-toplevel

        initialized = _C.is_initialized()
        self.num_replicas = _C.size() if initialized else 1
        self.rank = _C.rank() if initialized else 0
        indices = list(range(len(self.dataset)))
        if self.shuffle:
            random.Random(self.seed + self.epoch).shuffle(indices)
        self.remaining_indices = indices[self.processed_num:]
        self.num_samples = int(math.ceil(len(self.remaining_indices) / self.num_replicas))
        self.total_size = self.num_samples * self.num_replicas

    def __iter__(self):
        indices = self.remaining_indices[:]
        while len(indices) < self.total_size:  # evenly divisible, as DistributedSampler: repeats the first
            indices += indices[:self.total_size - len(indices)]
        self.indices = indices[self.rank:self.total_size:self.num_replicas]
        return iter(self.indices)

    def __len__(self):
        return self.num_samples
