"""staging.py's device operations on CPU tensors, for the checks that run hvdrun.torch's staged path on a
machine without a GPU (hvdrun_torch_checks.py, torch_collectives_checks.py)."""

import torch


class HostAsDevice:
    """staging.py's device operations on CPU tensors, counting the events recorded and waited for: with it,
    CPU tensors take the path of CUDA tensors (copies, events, the staging thread), less the device."""

    def __init__(self):
        self.recorded, self.waited = 0, 0
        device = self

        class Event:
            def synchronize(self):
                device.waited += 1

        self.event = Event

    @staticmethod
    def pinned_empty(shape, dtype):
        return torch.empty(shape, dtype=dtype)

    @staticmethod
    def current_stream(device):
        return None

    @staticmethod
    def copy_on_stream(destination, source, stream):
        destination.copy_(source)

    def record_event(self, stream):
        self.recorded += 1
        return self.event()
