"""jax peer for `make bench`: XLA on the CPU, each workload one jax.jit program, timed in
steady state (after compiling) up to block_until_ready. argv: THREADS NAME...; prints
`NAME MEDIAN_MS` per workload (bench/peer_common.py: pin, medians), `missing jax` when
jax is not installed. train_step_mlp: forward, cross-entropy, grads and Adam (lr 1e-3)
in one jitted step, the loss read back, as bench/peer_torch_train.py."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import peer_common as pc  # noqa: E402


def softmax(jnp, x):
    e = jnp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def train_step(jax, jnp):
    ws, bs, x, y = pc.mlp_init()
    params = [jnp.asarray(p) for p in ws + bs]
    x, y = jnp.asarray(x), jnp.asarray(y)

    def loss_fn(p):
        h = x
        for l in range(3):
            h = h @ p[l] + p[3 + l]
            if l < 2:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    def adam(p, m, v, t):
        loss, g = jax.value_and_grad(loss_fn)(p)
        b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
        m = [b1 * mi + (1 - b1) * gi for mi, gi in zip(m, g)]
        v = [b2 * vi + (1 - b2) * gi * gi for vi, gi in zip(v, g)]
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t
        p = [pi - lr * (mi / c1) / (jnp.sqrt(vi / c2) + eps) for pi, mi, vi in zip(p, m, v)]
        return p, m, v, loss

    step = jax.jit(adam, donate_argnums=(0, 1, 2))
    state = {"p": params, "m": [jnp.zeros_like(p) for p in params], "v": [jnp.zeros_like(p) for p in params],
             "t": 0}

    def run():
        state["t"] += 1
        state["p"], state["m"], state["v"], loss = step(state["p"], state["m"], state["v"],
                                                        jnp.float32(state["t"]))
        return float(loss)

    return lambda: pc.train_median_ms(run)


def work(names):
    import jax
    import jax.numpy as jnp

    fns = {
        "fused_chain_16M": lambda a, b, c: jnp.maximum(a * b + c, 0) * jnp.float32(0.5),
        "softmax_4096": lambda x: softmax(jnp, x),
        "matmul_1024": jnp.matmul,
        "matmul_2048": jnp.matmul,
        "matmul_128x784x256": jnp.matmul,
    }
    out = {}
    for name in names:
        if name == "train_step_mlp":
            out[name] = train_step(jax, jnp)
        elif name in fns:
            f, args = jax.jit(fns[name]), [jax.device_put(a) for a in pc.inputs(name)]
            out[name] = lambda f=f, args=args: pc.median_ms(lambda: f(*args).block_until_ready())
    return out


if __name__ == "__main__":
    pc.main("jax", work)
