"""Allgather and alltoall of CUDA tensors in device memory (a --nccl job's DEVICE path, placement.py),
whose ranks give rows that may differ, as Horovod's.

libhvdrun's device runtime gathers and exchanges equal blocks into the caller's buffers
(Runtime::AllgatherAsync and AlltoallAsync of `count` elements, into device memory over NCCL). Rows
that differ between ranks therefore go in three steps:

1. When the call is made, each rank's row counts (allgather: its first dimension; alltoall: its
   splits) are gathered over the host runtime: a named allgather of int64, named after the call with
   EXCHANGE_SUFFIXES, negotiated as any named collective (ranks may start them in any order).
2. Once that has completed, on a submitter thread of its own (which waits for those exchanges only,
   never for device work), every rank knows every rank's rows: each block of rows is padded to the
   largest count of rows of any rank in a device buffer, on the caller's stream of the call (no copy
   where this rank's rows fill their blocks), and the device collective is submitted with that
   stream. Every rank computes the same block, so every rank gives the same count; where it is 0 no
   rank submits one.
3. When the caller synchronizes, the host waits for step 2's submission (the row counts are host data,
   which the result's shape needs), and the device collective completes on the caller's current stream
   (completion.py); the received blocks' rows are then put together on that stream (narrow and cat; none
   when every block is full).

Other types than libhvdrun's go as their bytes, in blocks padded to whole int32 words. Tests run this
with CPU tensors over the host runtime (tests/python/hvdrun_torch_checks.py, device_path_without_a_device).
"""

import contextlib

import torch

from hvdrun.torch import placement

# The names of the row-count exchanges: "<name>.rows" (allgather) and "<name>.splits" (alltoall).
ROWS_SUFFIX = ".rows"
SPLITS_SUFFIX = ".splits"
EXCHANGE_SUFFIXES = (ROWS_SUFFIX, SPLITS_SUFFIX)


class _Exchange:
    """The host runtime's allgather of every rank's row counts, as the event the submitter waits for."""

    def __init__(self, c_module, name, counts):
        self._counts = torch.tensor(counts, dtype=torch.int64)
        self._width = len(counts)
        self._handle = c_module.allgather_async(name, self._counts.data_ptr(), self._width, "int64", self._width)

    def synchronize(self):
        self._handle.wait()

    def by_rank(self, size):
        """Every rank's counts (a list per rank, in rank order), once synchronize() has returned."""
        values = torch.empty(size * self._width, dtype=torch.int64)
        self._handle.copy_to(values.data_ptr())
        return values.view(size, self._width).tolist()


class _Rows:
    """A contiguous tensor as rows of `width` carrier elements: its own type where libhvdrun has it,
    else its bytes (carried as int32 words on the wire, so blocks are whole words)."""

    def __init__(self, local, runtime_types):
        self.local = local
        self.trailing = tuple(local.shape[1:])
        rows = local.shape[0]
        if local.dtype in runtime_types:
            self.width = _elements(self.trailing)
            self.carrier = local.view(rows, self.width)
            self.type_name, self.per_word = runtime_types[local.dtype], 1
        else:
            self.width = _elements(self.trailing) * local.element_size()
            self.carrier = local.reshape(-1).view(torch.uint8).view(rows, self.width)
            self.type_name, self.per_word = "int32", 4

    def block(self, rows):
        """Carrier elements in a block of `rows` rows, padded to whole words on the wire."""
        return -(-rows * self.width // self.per_word) * self.per_word

    def pack(self, parts, block):
        """One buffer of len(parts) blocks of `block` carrier elements, block j holding rows
        [start, start + rows) of parts[j] = (start, rows): this tensor itself where they fill it."""
        flat = self.carrier.reshape(-1)
        filled = all(rows * self.width == block for _, rows in parts)  # the parts are consecutive
        if filled and flat.data_ptr() % (self.per_word * flat.element_size()) == 0:
            return flat
        send = torch.empty(len(parts) * block, dtype=flat.dtype, device=flat.device)
        blocks = send.view(len(parts), block)
        for index, (start, rows) in enumerate(parts):
            if rows > 0:
                blocks[index, : rows * self.width].copy_(self.carrier[start:start + rows].reshape(-1))
        return send

    def unpack(self, received, rows_by_rank, block):
        """The rows of every rank's block of `received` (None: no block), as one tensor of this type."""
        total = sum(rows_by_rank)
        if received is None:
            flat = torch.empty(0, dtype=self.carrier.dtype, device=self.carrier.device)
        elif all(rows * self.width == block for rows in rows_by_rank):
            flat = received
        else:
            blocks = received.view(len(rows_by_rank), block)
            flat = torch.cat([blocks[rank].narrow(0, 0, rows * self.width) for rank, rows in enumerate(rows_by_rank)])
        if self.per_word != 1:
            flat = flat.view(self.local.dtype)
        return flat.view((total,) + self.trailing)


def _elements(shape):
    count = 1
    for size in shape:
        count *= size
    return count


def start(c_module, submitter, runtime_types, call, tensor, name, splits=None):
    """Starts an allgather (`splits` None) or an alltoall (`splits`: the rows for each rank) of the
    contiguous rows of `tensor` named `name`, through c_module (hvdrun._C) and `submitter` (a
    staging.OrderedSubmitter). Returns (handle, finish, tensors to keep until the handle completes);
    finish() gives (the received rows as one tensor where `tensor` is, the rows from each rank)."""
    size, rank = c_module.size(), c_module.rank()
    rows = _Rows(tensor.detach().contiguous(), runtime_types)
    device = rows.local.device
    caller_stream = torch.cuda.current_stream(device) if device.type == "cuda" else None
    stream = placement.current_stream(device)
    if splits is None:
        exchange = _Exchange(c_module, name + ROWS_SUFFIX, [rows.local.shape[0]])
        parts = [(0, rows.local.shape[0])]
        collective = c_module.allgather_into_async
    else:
        exchange = _Exchange(c_module, name + SPLITS_SUFFIX, list(splits))
        starts = [sum(splits[:index]) for index in range(size)]
        parts = list(zip(starts, splits))
        collective = c_module.alltoall_into_async
    keep = [rows.local, exchange]
    launched = {}

    def submit():
        # On the submitter thread, once every rank's counts are here.
        by_rank = exchange.by_rank(size)
        launched["rows"] = [counts[0] if splits is None else counts[rank] for counts in by_rank]
        block = rows.block(max(max(counts) for counts in by_rank))
        launched["block"] = block
        if block == 0:
            return _Completed()
        with torch.cuda.stream(caller_stream) if caller_stream is not None else contextlib.nullcontext():
            send = rows.pack(parts, block)
            received = torch.empty(size * block, dtype=send.dtype, device=device)
        keep.extend((send, received))
        launched["send"], launched["received"] = send, received  # finish() holds them too
        return collective(name, send.data_ptr(), received.data_ptr(), block // rows.per_word, rows.type_name,
                          stream=stream)

    handle = submitter.submit_after(exchange, submit, "hvdrun.torch.%s('%s')" % (call, name))

    def finish():
        # `received` is read on the current stream, recorded there by handles.complete (it is in `keep`).
        with torch.no_grad():
            output = rows.unpack(launched.get("received"), launched["rows"], launched["block"])
        return output, launched["rows"]

    return handle, finish, keep


class _Completed:
    """The handle of a collective of empty blocks, which no rank submits."""

    @staticmethod
    def wait():
        pass

    @staticmethod
    def wait_on_stream(stream):
        pass

    @staticmethod
    def ready():
        return True
