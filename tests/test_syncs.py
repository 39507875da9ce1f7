"""cu.count_syncs: every read a GPU would wait for is counted, on a CPU too; nothing else is."""

import threading

import numpy as np
import pytest
import torch
from torch import nn

import course_utils as cu
from course_utils.counters.sync_rules import copy_blocks, host_held_optimizer_state
from course_utils.counters.syncs import cross_check_cuda

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
GRAD_MODES = {"autograd on": torch.enable_grad, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}


def count(fn, grad_mode=torch.enable_grad):
    with grad_mode(), cu.count_syncs() as syncs:
        fn()
    return syncs


def t6():
    return torch.arange(6.0)


READS = {  # each would make the host wait on a GPU: counted once, named as the learner wrote it
    ".item()": lambda t: t.sum().item(),
    ".tolist()": lambda t: t.tolist(),
    "print(tensor)": lambda t: print(t),
    "repr(tensor)": lambda t: repr(t),
    "f-string of a 0-d tensor": lambda t: f"{t.sum():.3f}",
    ".cpu()": lambda t: t.cpu(),
    ".numpy()": lambda t: t.numpy(),
    "np.asarray(t)": lambda t: np.asarray(t),
    "nonzero": lambda t: t.nonzero(),
    "one-argument torch.where": lambda t: torch.where(t > 2),
    "masked_select": lambda t: t.masked_select(t > 2),
    "unique": lambda t: t.unique(),
    "torch.allclose": lambda t: torch.allclose(t, t + 1e-9),
    "torch.equal": lambda t: torch.equal(t, t),
    "boolean-mask indexing": lambda t: t[t > 2],
    "boolean-mask assignment": lambda t: t.clone().__setitem__(t > 2, 0.0),
    "bool(t)": lambda t: bool(t[1] > 0),
    "if t:": lambda t: 1 if t[1] else 0,
    "float(t)": lambda t: float(t[1]),
    "int(t)": lambda t: int(t[1]),
    "a tensor as an index": lambda t: [0, 1, 2][t[1].long()],
    "repeat_interleave without output_size": lambda t: torch.repeat_interleave(t, torch.ones(6, dtype=torch.long)),
}
LABEL_WORDS = {".item()": ".item()", ".tolist()": ".tolist()", "print(tensor)": "print", ".cpu()": ".cpu()",
               ".numpy()": ".numpy()", "boolean-mask indexing": "t[mask]", "boolean-mask assignment": "t[mask] =",
               "bool(t)": "bool(", "float(t)": "float(", "int(t)": "int(", "nonzero": "nonzero",
               "one-argument torch.where": "torch.where", "torch.allclose": "allclose", "unique": "unique"}


@pytest.mark.parametrize("grad_mode", GRAD_MODES.values(), ids=GRAD_MODES.keys())
@pytest.mark.parametrize("name", READS)
def test_each_read_counts_once_under_every_grad_mode(name, grad_mode, capsys):
    t = t6()
    syncs = count(lambda: READS[name](t), grad_mode)
    assert syncs.count == 1, f"{name}: {syncs}"
    if name in LABEL_WORDS:
        assert LABEL_WORDS[name] in str(syncs), f"{name}: the count does not say what it was: {syncs}"


def test_inference_mode_is_seen_however_it_is_entered():
    """Lesson 16 builds a test on this: .item() of an inference tensor, inside and outside the mode."""
    with torch.inference_mode():
        t = t6() * 2
    assert count(lambda: t.sum().item()).count == 1  # an inference tensor read outside the mode
    with cu.count_syncs() as syncs:  # the counter entered before inference_mode
        with torch.inference_mode():
            t.sum().item()
            bool(t[0])
            t[t > 1]
    assert syncs.count == 3, str(syncs)
    with torch.inference_mode(), cu.count_syncs() as syncs:  # and after it
        float(t.max()), t.tolist()
    assert syncs.count == 2, str(syncs)


NO_SYNC = {
    "compute": lambda t: (t @ t + t.exp()).sum(),
    ".detach()": lambda t: t.detach(),
    ".to(same device)": lambda t: t.to(t.device),
    ".to(dtype)": lambda t: t.to(torch.float64),
    "creating tensors": lambda t: (torch.zeros(3), torch.ones_like(t), torch.tensor([1.0, 2.0]), torch.arange(4)),
    "masked_fill and 3-argument where": lambda t: (t.masked_fill(t > 2, 0.0), torch.where(t > 2, t, 0.0)),
    "metric kept on the device": lambda t: torch.zeros(()).add_(t.sum().detach()).add_((t > 2).sum()),
    "a meta tensor": lambda t: torch.empty(3, device="meta").sum(),
}


@pytest.mark.parametrize("grad_mode", GRAD_MODES.values(), ids=GRAD_MODES.keys())
@pytest.mark.parametrize("name", NO_SYNC)
def test_what_never_waits_is_not_counted(name, grad_mode):
    t = t6().requires_grad_(grad_mode is torch.enable_grad)
    syncs = count(lambda: NO_SYNC[name](t), grad_mode)
    assert syncs.count == 0, f"{name}: {syncs}"


def test_an_evaluation_that_accumulates_on_the_device_reads_once():
    model = nn.Linear(4, 3)
    X, y = torch.randn(40, 4), torch.randint(0, 3, (40,))
    with torch.inference_mode(), cu.count_syncs() as syncs:
        total = torch.zeros(())
        for i in range(0, 40, 8):
            total += (model(X[i:i + 8]).argmax(1) == y[i:i + 8]).sum()
        acc = total.item() / 40
    assert syncs.count == 1 and 0 <= acc <= 1, str(syncs)


def test_a_host_copy_is_one_sync_however_it_is_read_afterwards():
    t = t6()
    assert count(lambda: t.cpu().tolist()).count == 1
    assert count(lambda: t.cpu().numpy()).count == 1
    assert count(lambda: t.cpu().sum().item()).count == 1  # computed from the host copy: on the host
    assert count(lambda: (t.cpu(), t.sum().item())).count == 2  # the original is still on the device
    with cu.count_syncs():
        c = t.cpu()
    assert torch.equal(c, t) and c.data_ptr() == t.data_ptr()  # an alias, as .cpu() of a CPU tensor is
    w = torch.ones(3, requires_grad=True)
    for grad_mode in GRAD_MODES.values():  # and it behaves as the tensor itself would
        with grad_mode(), cu.count_syncs():
            c = w.cpu()
        assert c.requires_grad and not c.is_inference()
        with torch.no_grad():
            c.add_(1)
    assert w.tolist() == [4.0, 4.0, 4.0]


def adam_steps(make_opt, steps=3):
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = make_opt(model.parameters())
    X = torch.randn(16, 5)
    with cu.count_syncs() as syncs:
        for _ in range(steps):
            opt.zero_grad()
            model(X).pow(2).mean().backward()
            opt.step()
    return syncs, opt


OPTIMIZERS = {
    "Adam": lambda p: torch.optim.Adam(p, lr=1e-3),
    "AdamW": lambda p: torch.optim.AdamW(p, lr=1e-3),
    "Adam foreach": lambda p: torch.optim.Adam(p, lr=1e-3, foreach=True),
    "NAdam": lambda p: torch.optim.NAdam(p),
    "RAdam": lambda p: torch.optim.RAdam(p),
    "Adamax": lambda p: torch.optim.Adamax(p),
    "SGD": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_step_counters_on_the_cpu_are_not_syncs(name):
    """Adam and AdamW read state['step'] with .item() every step; it lives on the CPU on a GPU too."""
    syncs, opt = adam_steps(OPTIMIZERS[name])
    assert syncs.count == 0, f"{name}: {syncs}"
    if name != "SGD":
        assert any(True for _ in host_held_optimizer_state(opt)), "the spy found no step counter to exclude"


def test_only_the_optimizer_counters_are_excluded():
    # ASGD keeps its counters on the parameters' device: on a GPU its .item() calls do wait
    syncs, _ = adam_steps(lambda p: torch.optim.ASGD(p), steps=2)
    assert syncs.count > 0, str(syncs)
    # a learner's own 0-d CPU scalar read inside the loop still counts
    model = nn.Linear(3, 1)
    opt = torch.optim.Adam(model.parameters())
    with cu.count_syncs() as syncs:
        for _ in range(3):
            opt.zero_grad()
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            opt.step()
            _ = loss.item()
    assert syncs.count == 3, str(syncs)


def test_train_with_adam_makes_no_sync_per_step():
    data = cu.load_dataset("digits", verbose=False)

    def syncs_for(steps, make_opt):
        torch.manual_seed(0)
        model = cu.make_mlp(cu.MLPConfig(64, hidden=32, depth=2))
        with cu.count_syncs() as syncs:
            cu.train(model, data, steps=steps, optimizer=make_opt(model.parameters()), progress=False)
        return syncs

    for name in ("Adam", "AdamW"):
        few, many = syncs_for(5, OPTIMIZERS[name]), syncs_for(25, OPTIMIZERS[name])
        assert few.count == many.count == 1, f"{name}: {few} for 5 steps, {many} for 25 steps"
        assert ".cpu()" in str(few), "the one sync is train()'s read of the losses at the end"


def test_a_block_that_uses_an_accelerator_counts_only_its_waits():
    t = t6()
    with cu.count_syncs("cuda") as syncs:  # a GPU loop: reading a CPU tensor waits for nothing
        t.sum().item(), t.tolist(), t[t > 2]
    assert syncs.count == 0 and not syncs.cpu_stands_in
    with cu.count_syncs("cpu") as syncs:
        t.sum().item()
    assert syncs.count == 1 and syncs.cpu_stands_in


def test_copy_blocks_rules():
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert copy_blocks(cpu, cuda, non_blocking=False, host_pinned=True)  # non_blocking=False always waits
    assert copy_blocks(cpu, cuda, non_blocking=True, host_pinned=False)  # pageable memory is staged first
    assert not copy_blocks(cpu, cuda, non_blocking=True, host_pinned=True)
    assert copy_blocks(cuda, cpu, non_blocking=False, host_pinned=False)
    assert not copy_blocks(cuda, cpu, non_blocking=True, host_pinned=True)
    assert not copy_blocks(cpu, cpu, non_blocking=False, host_pinned=False)
    assert not copy_blocks(cuda, torch.device("cuda", 1), non_blocking=False, host_pinned=False)


def test_the_counter_leaves_torch_as_it_found_it():
    before = dict(vars(torch.Tensor)), torch.cuda.synchronize, dict(vars(torch.cuda.Event))
    with cu.count_syncs(), cu.count_syncs() as inner:  # nested counters both count
        torch.ones(2).sum().item()
    assert inner.count == 1
    assert (dict(vars(torch.Tensor)), torch.cuda.synchronize, dict(vars(torch.cuda.Event))) == before
    with pytest.raises(ZeroDivisionError), cu.count_syncs():
        raise ZeroDivisionError
    assert dict(vars(torch.Tensor)) == before[0]
    assert bool(torch.ones(())) and float(torch.ones(())) == 1.0 and torch.ones(2).tolist() == [1.0, 1.0]


def test_other_threads_are_not_counted():
    t = t6()
    with cu.count_syncs() as syncs:
        worker = threading.Thread(target=lambda: (t.tolist(), t.sum().item(), repr(t)))
        worker.start()
        worker.join()
    assert syncs.count == 0, str(syncs)


def test_by_op_and_str_name_what_was_counted():
    with cu.count_syncs() as syncs:
        x = torch.ones(4)
        _ = x.sum().item(), bool(x[0] > 0), x.sum().item()
    assert syncs.count == 3 and syncs.by_op == {".item()": 2, "bool(tensor) or `if tensor:`": 1}
    assert str(syncs).startswith("3 host syncs (.item() × 2")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message without CUDA")
def test_cross_check_needs_cuda():
    with pytest.raises(RuntimeError, match="needs a CUDA device"):
        cross_check_cuda(lambda: None)


# ---- on a real GPU ---------------------------------------------------------------------------------
@needs_cuda
def test_cuda_reads_copies_and_synchronize_are_counted():
    dev = torch.device("cuda")
    x = torch.randn(64, device=dev)
    host, pinned = torch.randn(64), torch.randn(64).pin_memory()
    cases = {
        ".item()": (lambda: x.sum().item(), 1), "nonzero": (lambda: x.nonzero(), 1),
        "t[mask]": (lambda: x[x > 0], 1), ".cpu()": (lambda: x.cpu(), 1),
        "non_blocking D2H": (lambda: x.to("cpu", non_blocking=True), 0),
        "torch.cuda.synchronize": (lambda: torch.cuda.synchronize(), 1),
        "blocking H2D": (lambda: host.to(dev), 1),
        "pageable non_blocking H2D": (lambda: host.to(dev, non_blocking=True), 1),
        "pinned non_blocking H2D": (lambda: pinned.to(dev, non_blocking=True), 0),
        "a CPU read in a GPU loop": (lambda: (x * 2, host.sum().item()), 0),
        "compute": (lambda: (x @ x).exp(), 0),
    }
    for name, (fn, want) in cases.items():
        fn()
        with cu.count_syncs() as syncs:
            fn()
        assert syncs.count == want, f"{name}: {syncs}"


@needs_cuda
def test_cuda_adam_without_capturable_keeps_its_counters_off_the_count():
    model = nn.Linear(8, 4).cuda()
    opt = torch.optim.Adam(model.parameters(), capturable=False, foreach=False)
    X = torch.randn(16, 8, device="cuda")
    with cu.count_syncs() as syncs:
        for _ in range(3):
            opt.zero_grad()
            model(X).pow(2).mean().backward()
            opt.step()
    assert syncs.count == 0, str(syncs)


@needs_cuda
def test_count_agrees_with_cuda_sync_debug_mode():
    model = nn.Linear(16, 4).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    X = torch.randn(32, 16, device="cuda")

    def loop(log_every_step):
        for _ in range(5):
            opt.zero_grad()
            loss = model(X).pow(2).mean()
            loss.backward()
            opt.step()
            if log_every_step:
                loss.item()

    for log, want in ((True, 5), (False, 0)):
        loop(log)
        check = cross_check_cuda(lambda log=log: loop(log))
        assert check.counted == check.warned == want, str(check)
