"""tinygrad peer for `make bench`: its CPU backend (DEV=CPU: C kernels compiled with
clang), each workload's graph built and realized per call, timed in steady state (kernels
compiled) up to realize and the device's synchronize. argv: THREADS NAME...; prints
`NAME MEDIAN_MS` per workload (bench/peer_common.py: pin, medians), `missing tinygrad`
when it is not installed. NUM_CPU_THREADS=THREADS caps the parts its kernels are split
into; tinygrad 0.14 still runs them one after another on its one worker thread
(CPUProgram, encode_queue), so it uses one core whatever THREADS. train_step_mlp:
forward, cross-entropy, backward and Adam (lr 1e-3) in a TinyJit step, as tinygrad
trains, the loss read back."""
import os
import sys

import peer_common as pc

os.environ.setdefault("DEV", "CPU")


def softmax(x):
    e = (x - x.max(axis=1, keepdim=True)).exp()
    return e / e.sum(axis=1, keepdim=True)


def train_step(tg):
    from tinygrad.nn.optim import Adam

    ws, bs, x, y = pc.mlp_init()
    ws, bs = [tg.Tensor(w).realize() for w in ws], [tg.Tensor(b).realize() for b in bs]
    x, y = tg.Tensor(x).realize(), tg.Tensor(y).realize()
    opt = Adam(ws + bs, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8)

    @tg.TinyJit
    def step():
        with tg.Context(TRAINING=1):
            h = x
            for l in range(3):
                h = h @ ws[l] + bs[l]
                if l < 2:
                    h = h.relu()
            loss = h.sparse_categorical_crossentropy(y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.realize()

    return lambda: pc.train_median_ms(lambda: step().item())


def work(names):
    import tinygrad as tg

    dev = tg.Device[tg.Device.DEFAULT]
    fns = {
        "fused_chain_16M": lambda a, b, c: (a * b + c).relu() * 0.5,
        "softmax_4096": softmax,
        "matmul_1024": lambda a, b: a @ b,
        "matmul_2048": lambda a, b: a @ b,
        "matmul_128x784x256": lambda a, b: a @ b,
    }

    def timed(f, args):
        def call():
            f(*args).realize()
            dev.synchronize()
        return pc.median_ms(call)

    out = {}
    for name in names:
        if name == "train_step_mlp":
            out[name] = train_step(tg)
        elif name in fns:
            out[name] = lambda f=fns[name], name=name: timed(f, [tg.Tensor(a).realize() for a in pc.inputs(name)])
    return out


if __name__ == "__main__":
    os.environ["NUM_CPU_THREADS"] = sys.argv[1]
    pc.main("tinygrad", work)
