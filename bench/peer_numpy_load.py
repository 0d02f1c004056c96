"""numpy peer for bench_lib.c (load_safetensors_256MB): argv[1] a .safetensors file holding
one f32 tensor, argv[2] a .npy path. Writes that tensor's bytes to argv[2] with np.save,
reads it once (a warm page cache), then times np.load of it: the median of argv[3] loads
(default 7). Prints one line: load_safetensors_256MB MEDIAN_MS"""
import json
import struct
import sys
import time

import numpy as np


def main():
    st, npy = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    with open(st, "rb") as f:
        (hlen,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(hlen))
    (name,) = [k for k in header if k != "__metadata__"]
    info = header[name]
    assert info["dtype"] == "F32"
    begin, end = info["data_offsets"]
    a = np.fromfile(st, dtype="<f4", count=(end - begin) // 4, offset=8 + hlen).reshape(info["shape"])
    np.save(npy, a)
    del a
    np.load(npy)  # warm the page cache
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        b = np.load(npy)
        times.append((time.perf_counter() - t0) * 1e3)
        del b
    times.sort()
    print("load_safetensors_256MB %.3f" % times[len(times) // 2], flush=True)


if __name__ == "__main__":
    main()
