import pytest
import torch
from torch import nn

import course_utils as cu

from clock import VirtualClock, retried


@pytest.fixture(scope="module")
def digits():
    return cu.load_dataset("digits", verbose=False)


def mlp(seed=0):
    torch.manual_seed(seed)
    return cu.make_mlp(cu.MLPConfig(64, hidden=32, depth=2))


@pytest.mark.parametrize("k", [2, 3])
def test_accumulation_gives_the_full_batch_gradients(digits, k):
    X, y = digits.X_train[:10], digits.y_train[:10]  # 10 = 4+3+3 for k=3: uneven micro-batches
    full, acc = mlp(), mlp()
    for model, steps in ((full, 1), (acc, k)):
        opt = torch.optim.SGD(model.parameters(), lr=0.0)  # lr 0: keep the gradients to compare
        cu.train_step(model, (X, y), opt, accumulation_steps=steps)
    cu.assert_grads_close(acc, full, rtol=1e-5, atol=1e-6)


def test_clipping_limits_the_gradient_norm(digits):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    cu.train_step(model, (digits.X_train[:32], digits.y_train[:32]), opt, clip_grad_norm=0.01)
    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    assert norm <= 0.01 + 1e-6


def test_autocast_and_scaler_plug_in(digits):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**4)
    loss = cu.train_step(model, (digits.X_train[:32], digits.y_train[:32]), opt,
                         amp_dtype=torch.bfloat16, scaler=scaler, clip_grad_norm=1.0)
    assert torch.isfinite(loss) and loss.requires_grad is False


def test_zero_grad_mode_is_an_argument(digits):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batch = (digits.X_train[:8], digits.y_train[:8])
    cu.train_step(model, batch, opt)
    opt.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in model.parameters())


def test_evaluate_uses_inference_mode_and_restores_the_mode(digits):
    model = mlp()
    model.train()
    seen = []
    model.register_forward_hook(lambda m, i, o: seen.append((torch.is_inference_mode_enabled(), m.training)))
    acc = cu.evaluate(model, digits.X_test, digits.y_test, batch_size=100)
    assert 0.0 <= acc <= 1.0 and model.training
    assert seen and all(inf and not training for inf, training in seen)


def test_evaluate_restores_every_modules_flag(digits):
    model = mlp()
    model.train()
    frozen = list(model.modules())[1]
    frozen.eval()  # a submodule the caller froze in eval mode (a BatchNorm at its running statistics)
    cu.evaluate(model, digits.X_test, digits.y_test, batch_size=100)
    assert model.training and not frozen.training, "evaluate must put back every module's flag, not only the top's"


def test_train_learns_digits_and_records_history(digits):
    torch.manual_seed(0)
    hist = cu.train(mlp(), digits, steps=150, batch_size=64, lr=0.1, eval_every=50, progress=False,
                    label="mlp")
    assert hist.steps == 150 and len(hist.lr) == len(hist.step_time) == 150
    assert hist.eval_step == [50, 100, 150]
    assert hist.final_accuracy > 0.85
    assert hist.loss[-1] < hist.loss[0]
    assert hist.steps_to(0.5) == 50 and hist.time_to(0.5) == pytest.approx(hist.wall_time[49])
    assert "mlp: 150 steps" in str(hist) and hist.to_dict()["kind"] == "history"


def test_scheduler_and_early_stop_at_target(digits):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.3, total_steps=200)
    hist = cu.train(model, digits, steps=200, optimizer=opt, scheduler=sched, eval_every=10,
                    target=0.8, progress=False)
    assert hist.steps < 200 and hist.final_accuracy >= 0.8
    assert hist.lr[0] < max(hist.lr)  # the 1cycle warm-up


def test_steps_to_target_over_seeds(digits):
    def run(seed):
        return cu.train(mlp(seed), digits, steps=120, lr=0.1, eval_every=20, target=0.7, seed=seed,
                        progress=False)

    res = cu.steps_to_target(run, 0.7, seeds=(0, 1, 2), label="sgd")
    assert res.seeds == [0, 1, 2] and res.reached == 3
    assert res.median_steps in res.steps and res.time_to_target > 0
    assert "steps to 70%" in str(res) and res.to_dict()["kind"] == "target"
    never = cu.TargetResult("x", 0.99, [0, 1, 2], [None, None, 5], 0.01)
    assert never.median_steps is None and "never reached" in str(never)


def test_custom_step_fn_plugs_in(digits):
    calls = []

    def my_step(model, batch, optimizer, **kw):
        calls.append(kw)
        return cu.train_step(model, batch, optimizer, **kw)

    cu.train(mlp(), digits, steps=3, step_fn=my_step, progress=False, accumulation_steps=2)
    assert calls == [{"accumulation_steps": 2}] * 3


def test_bad_arguments():
    with pytest.raises(ValueError, match="accumulation_steps"):
        cu.train_step(nn.Linear(1, 1), (torch.ones(1, 1), torch.zeros(1, dtype=torch.long)),
                      torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1), accumulation_steps=0)


def test_steps_to_target_accepts_a_measured_step_time(digits):
    def run(seed):
        return cu.train(mlp(seed), digits, steps=40, lr=0.1, eval_every=20, seed=seed, progress=False)

    res = cu.steps_to_target(run, 0.5, seeds=(0, 1, 2), step_time=0.002)
    assert res.step_time == 0.002 and res.time_to_target == res.median_steps * 0.002


def sync_count(digits, steps, optimizer=None, **kw):
    model = mlp()
    opt = optimizer(model.parameters()) if optimizer else None
    with cu.count_syncs() as syncs:
        cu.train(model, digits, steps=steps, eval_every=10, lr=0.1, optimizer=opt, progress=False, **kw)
    return syncs


OPTIMIZERS = {"SGD": None, "Adam": lambda p: torch.optim.Adam(p, lr=1e-3),
              "AdamW": lambda p: torch.optim.AdamW(p, lr=1e-3)}


@pytest.mark.parametrize("optimizer", OPTIMIZERS.values(), ids=OPTIMIZERS.keys())
@pytest.mark.parametrize("amp_dtype", [None, torch.bfloat16], ids=["fp32", "bf16"])
def test_train_makes_no_host_sync_per_step(digits, amp_dtype, optimizer):
    """Syncs come from the evaluations and the end of the run, never from the steps between them.

    Adam's and AdamW's step counters (read with .item() every step) live on the CPU on a GPU too:
    the counter leaves them out, so the count is the same as SGD's.
    """
    few = sync_count(digits, 20, optimizer, amp_dtype=amp_dtype)
    many = sync_count(digits, 60, optimizer, amp_dtype=amp_dtype)
    per_eval = (many.count - few.count) / 4  # 4 more evaluations (every 10 steps), 40 more steps
    assert per_eval == 1, f"{few} for 20 steps, {many} for 60 steps"
    # one .item() per evaluation (2), one .cpu() of all the losses at the end
    assert few.count == 3 and few.by_op == {".item()": 2, ".cpu()": 1}, str(few)


def test_a_sync_counter_that_saw_a_sync_says_so():
    with cu.count_syncs() as syncs:
        x = torch.ones(4)
        _ = x.sum().item(), bool(x[0] > 0)
    assert syncs.count == 2 and ".item()" in str(syncs) and "bool(tensor)" in str(syncs)


@pytest.mark.clock  # the real host clock against this test's own: retried, a stall can land between two reads
def test_the_host_clock_includes_data_loading_and_adds_up_to_the_elapsed_time(digits):
    import time

    X, y = digits.X_train[:64], digits.y_train[:64]
    fetched = []

    def timed_batches():
        while True:
            fetched.append(time.perf_counter())  # when train() asked for each batch
            yield X, y

    cu.train(mlp(), timed_batches(), steps=2, progress=False)  # one-time costs (first imports) out
    steps = 40

    def run(seed):
        fetched.clear()
        start = time.perf_counter()
        hist = cu.train(mlp(), timed_batches(), steps=steps, lr=0.1, progress=False)
        return hist, time.perf_counter() - start, list(fetched)

    def adds_up(result):
        hist, elapsed, asked = result
        host = hist.host_step_time
        return (len(host) == steps and sum(host[1:-1]) == pytest.approx(asked[steps - 1] - asked[1], abs=5e-3)
                and 0 < elapsed - sum(host) < 0.25 + 0.2 * elapsed)

    hist, elapsed, fetched = retried(run, adds_up)
    host = hist.host_step_time
    assert len(host) == steps and all(t > 0 for t in host)
    assert hist.host_wall_time[-1] == pytest.approx(sum(host))
    # step boundary to step boundary: steps 2..n-1 span exactly the time between their batch requests
    assert sum(host[1:-1]) == pytest.approx(fetched[steps - 1] - fetched[1], abs=5e-3)
    # and all the steps add up to the elapsed time, less the set-up and the final read of the losses
    assert 0 < elapsed - sum(host) < 0.25 + 0.2 * elapsed, (sum(host), elapsed)
    # on a CPU the host clock covers the step and its data wait
    assert all(h >= s + d - 1e-6 for h, s, d in zip(host, hist.step_time, hist.data_time))
    assert hist.step_clock == "host clock" and "host wall time per step" in str(hist)
    assert "data loading included" in str(hist) and "(host clock)" in str(hist)
    assert hist.to_dict()["host_step_time"] == host


def test_the_host_clock_sees_a_data_stall_that_the_step_time_leaves_out(digits):
    import time

    X, y = digits.X_train[:32], digits.y_train[:32]

    def slow_batches():
        while True:
            time.sleep(0.01)  # a data loader that cannot keep up
            yield X, y

    hist = cu.train(mlp(), slow_batches(), steps=6, eval_every=3, eval_data=digits, progress=False)
    assert len(hist.host_step_time) == 6 and all(t >= 0.01 for t in hist.host_step_time)
    assert all(d >= 0.01 for d in hist.data_time)  # the stall is data time: not in step_time
    assert all(h >= s + d - 1e-6 for h, s, d in zip(hist.host_step_time, hist.step_time, hist.data_time))
    assert hist.time_to(0.0, clock="host") == pytest.approx(hist.host_wall_time[2])
    assert hist.time_to(0.0, clock="host") > hist.time_to(0.0) == pytest.approx(hist.wall_time[2])
    with pytest.raises(ValueError, match="clock"):
        hist.time_to(0.5, clock="gpu")


def test_evaluation_is_on_neither_clock(digits, monkeypatch):
    clock = VirtualClock().install(monkeypatch, cu.training.loop)  # injected time: only the evaluations take any

    def slow_eval(model, X, y):
        clock.advance(0.3)
        return 0.0

    real = cu.training.loop.evaluate
    cu.training.loop.evaluate = slow_eval
    try:
        hist = cu.train(mlp(), digits, steps=4, eval_every=1, progress=False)
    finally:
        cu.training.loop.evaluate = real
    assert hist.eval_step == [1, 2, 3, 4] and len(hist.host_step_time) == 4
    assert hist.eval_seconds == pytest.approx([0.3] * 4)  # on its own stopwatch
    for h, s, d in zip(hist.host_step_time, hist.step_time, hist.data_time):
        assert h - (s + d) < 0.25 and h < 0.25, hist.host_step_time  # each evaluation took 0.3 s


def test_train_reads_a_dataloader_and_records_data_time(digits):
    ds = torch.utils.data.TensorDataset(digits.X_train[:256], digits.y_train[:256])
    loader = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True)
    hist = cu.train(mlp(), loader, steps=10, eval_every=5, eval_data=digits, progress=False)
    assert hist.steps == 10 == len(hist.data_time) == len(hist.step_time)  # 2.5 epochs of 4 batches
    assert all(t >= 0 for t in hist.data_time) and hist.eval_step == [5, 10]
    assert "data wait" in str(hist) and len(hist.host_step_time) == 10
    with pytest.raises(ValueError, match="eval_data"):
        cu.train(mlp(), loader, steps=2, eval_every=1, progress=False)


def test_train_step_clips_with_the_function_it_is_given(digits):
    calls = []

    def my_clip(params, max_norm):
        params = list(params)
        calls.append(max_norm)
        return torch.nn.utils.clip_grad_norm_(params, max_norm)

    cu.seed_everything(0)
    model = cu.make_mlp(cu.MLPConfig(64, 10, hidden=16, depth=1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    cu.train_step(model, (digits.X_train[:32], digits.y_train[:32]), opt, clip_grad_norm=0.5, clip_fn=my_clip)
    assert calls == [0.5]


def test_an_eval_fn_plugs_in_and_elapsed_to_counts_the_evaluations(digits):
    import time

    calls = []

    def slow_eval(model, X, y):
        calls.append(torch.is_grad_enabled())
        time.sleep(0.05)  # a slow evaluation: on no step clock, but on the stopwatch
        return cu.evaluate(model, X, y)

    hist = cu.train(mlp(), digits, steps=60, eval_every=20, eval_fn=slow_eval, progress=False)
    assert len(calls) == 3 and len(hist.eval_seconds) == 3 and all(s >= 0.05 for s in hist.eval_seconds)
    target = hist.eval_accuracy[1] - 1e-9 if hist.eval_accuracy[0] < hist.eval_accuracy[1] else 0.0
    first = next(i for i, a in enumerate(hist.eval_accuracy) if a >= target)
    expected = hist.host_wall_time[hist.eval_step[first] - 1] + sum(hist.eval_seconds[:first + 1])
    assert hist.elapsed_to(target) == pytest.approx(expected)
    assert hist.elapsed_to(target) >= 0.05 * (first + 1) + hist.time_to(target, clock="host") - 1e-9
    assert hist.elapsed_to(1.01) is None
