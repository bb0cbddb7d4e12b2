#!/usr/bin/env python3
"""The architecture rules of docs/architecture.md ("Modules and the one direction of
dependency"), checked on the source tree's #include lines. Run by ctest (`architecture`, label
cpu) through architecture_test.py, which also feeds it broken trees; by hand:
    python3 tests/arch/check_architecture.py [ROOT]
prints one line per violation (file:line: rule) and exits 1 when there is any.

Rules:
  1. engine/ includes nothing of kernels/, profiler/ or app/ (the engine has no CUDA and no GUI).
  2. kernels/ and profiler/ include nothing of app/.
  3. app/ includes only the public kernels/ headers (PUBLIC_KERNEL_HEADERS) and profiler/'s.
  4. A CUDA-free header (every .h except CUDA_HEADERS) includes no CUDA, CUPTI or cuBLAS header,
     directly or through the project headers it includes.
  5. engine/core/ (errors, workload, JSON, files: the bottom of the engine) includes nothing of
     engine/ outside core/.
  6. The studio's panels (app/studio/panels/) never see the session or the layer model: no file
     there includes app/studio/studio.h or app/studio/layer_workbench.h, directly or through
     the project headers it includes, nor takes a Studio& or LayerWorkbench& (or a pointer). A
     panel draws a plain view state and returns an actions struct; the studio
     (studio_views.cpp, layer_views.cpp) fills the one and applies the other.
  7. The folders of kernels/ (one kernel family or shared part each) include each other in one
     direction only: no cycle of folders (a part two families share sits in a folder of its own,
     as kernels/attention_common/ does for the attention families).
"""

import os
import re
import sys

# The kernels/ headers app/ may include: CUDA-free interfaces of the backend and the tools the
# CLI's benchmarks use. A new one is added here on purpose, not by accident.
PUBLIC_KERNEL_HEADERS = {
    "kernels/cuda_backend.h",
    "kernels/device_query.h",
    "kernels/attention/prepared_mha.h",
    "kernels/attention/block_sparse_attention.h",
    "kernels/gemm/cublas_gemm.h",
    "kernels/gemm_chain/gemm_chain.h",
    "kernels/gemm_chain_hopper/hopper_chain.h",
    "kernels/util/copy_kernel.h",
    "kernels/util/device_memory.h",
    "kernels/util/finite_check.h",
    "kernels/util/mha_check.h",
}

# Headers that are internal to kernels/ and profiler/ and may include CUDA headers.
CUDA_HEADERS = {
    "kernels/cuda_check.h",
    "kernels/cuda_backend_state.h",
    "kernels/gemm/cublas_check.h",
    "kernels/common/hopper/tensor_map.h",
    "kernels/attention_hopper/hopper_attention_params.h",
    "kernels/gemm_chain_hopper/hopper_chain_params.h",
    "profiler/capture/cuda_timing.h",
    "profiler/capture/cupti_range.h",
    "profiler/capture/cupti_activity.h",
    "profiler/capture/cupti_check.h",
}

# Rule 6: the studio's panels, and the models they must not reach: each header with the class
# it declares (the session, the layer of the Fusion / Tune / Profile tabs).
PANELS_DIR = "app/studio/panels/"
STUDIO_HEADER = "app/studio/studio.h"
WORKBENCH_HEADER = "app/studio/layer_workbench.h"
PANEL_FORBIDDEN = {STUDIO_HEADER: "Studio", WORKBENCH_HEADER: "LayerWorkbench"}
PANEL_PARAMS = {cls: re.compile(rf"\b{cls}\s*(?:const\s*)?[&*]")
                for cls in PANEL_FORBIDDEN.values()}

SYSTEM_CUDA = re.compile(r"^(cuda|cuda_runtime|cuda_runtime_api|cuda_fp16|cuda_bf16|cupti|"
                         r"cublas|cublasLt|cublas_v2|driver_types|vector_types)[\w.]*\.h$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
MODULES = ("engine", "kernels", "profiler", "app")
SOURCE_EXT = (".h", ".cpp", ".cu", ".cuh")


def includes(path):
    """[(line number, kind '<' or '"', name)] of one file."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                out.append((n, m.group(1), m.group(2)))
    return out


def sources(root):
    """Repository-relative paths of the C++ / CUDA sources of the four modules."""
    for module in MODULES:
        for dirpath, _, files in os.walk(os.path.join(root, module)):
            for name in sorted(files):
                if name.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def code_lines(path):
    """[(line number, text without its // comment)] of one file: rule 6 reads code, not the
    comments that may name Studio."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            out.append((n, line.split("//", 1)[0]))
    return out


def chain_finder(incs, end, header_ext):
    """A function (h, seen) -> the chain 'h -> b.h -> ... -> END' through the project headers
    (quoted includes ending in header_ext) from h, or None. end(h) is the chain's last link
    when it stops at h, else None. Rules 4 and 6 follow chains of includes with it."""
    memo = {}

    def find(h, seen):
        if h in memo:
            return memo[h]
        if h in seen or h not in incs:
            return None
        last = end(h)
        if last:
            memo[h] = last
            return last
        seen = seen | {h}
        for _, kind, name in incs[h]:
            if kind == '"' and name.endswith(header_ext):
                chain = find(name, seen)
                if chain:
                    memo[h] = f"{h} -> {chain}"
                    return memo[h]
        memo[h] = None
        return None

    return find


def panel_violations(root, files, incs):
    """Rule 6: the panels' includes reaching studio.h or layer_workbench.h, and their Studio&
    and LayerWorkbench& parameters."""
    bad = []
    why = "(a panel draws a view state and returns actions; the studio fills and applies them)"
    reaches = chain_finder(incs, lambda h: h if h in PANEL_FORBIDDEN else None, ".h")
    for f in files:
        if not f.startswith(PANELS_DIR):
            continue
        for n, kind, name in incs[f]:
            if kind != '"':
                continue
            chain = reaches(name, frozenset([f]))
            if chain in PANEL_FORBIDDEN:
                bad.append(f"{f}:{n}: a panel includes {chain} {why}")
            elif chain:
                end = chain.rsplit(" -> ", 1)[1]
                bad.append(f"{f}:{n}: a panel reaches {end} through {chain} {why}")
        for n, text in code_lines(os.path.join(root, f)):
            for cls, param in PANEL_PARAMS.items():
                if param.search(text):
                    bad.append(f"{f}:{n}: a panel takes a {cls} (pass a view state in and "
                               f"return an actions struct instead)")
    return bad


def check(root):
    """The violations, as 'file:line: message' strings, sorted."""
    files = list(sources(root))
    incs = {f: includes(os.path.join(root, f)) for f in files}
    bad = []
    for f in files:
        module = f.split("/")[0]
        for n, kind, name in incs[f]:
            if kind != '"':
                continue
            target = name.split("/")[0]
            where = f"{f}:{n}"
            if f.startswith("engine/core/") and name.startswith("engine/") and \
                    not name.startswith("engine/core/"):
                bad.append(f"{where}: engine/core/ includes {name} (core is the bottom of the "
                           f"engine: it includes only core/)")
            elif module == "engine" and target in ("kernels", "profiler", "app"):
                bad.append(f"{where}: engine/ includes {name} (the engine has no CUDA, "
                           f"profiler or GUI code)")
            elif module in ("kernels", "profiler") and target == "app":
                bad.append(f"{where}: {module}/ includes {name} (nothing below app/ includes it)")
            elif module == "app" and target == "kernels" and name not in PUBLIC_KERNEL_HEADERS:
                bad.append(f"{where}: app/ includes {name}, not a public kernels/ header "
                           f"(tests/arch/check_architecture.py lists them)")
    # Rule 4: CUDA through any chain of project headers, from each CUDA-free header.
    direct = {f: [(n, name) for n, kind, name in incs[f]
                  if kind == "<" and SYSTEM_CUDA.match(os.path.basename(name))] for f in files}
    # A chain 'a.h -> b.h -> <cuda.h>' from a header, or None.
    reaches_cuda = chain_finder(
        incs, lambda h: f"{h} -> <{direct[h][0][1]}>" if direct[h] else None, (".h", ".cuh"))
    for f in files:
        if not f.endswith(".h") or f in CUDA_HEADERS:
            continue
        chain = reaches_cuda(f, frozenset())
        if chain:
            bad.append(f"{f}:1: a CUDA-free header reaches a CUDA header: {chain} (or list "
                       f"{f} in CUDA_HEADERS if it is internal to kernels/ or profiler/)")
    for h in sorted(CUDA_HEADERS):
        if h.split("/")[0] not in ("kernels", "profiler"):
            bad.append(f"{h}:1: only kernels/ and profiler/ headers may include CUDA headers")
    bad += panel_violations(root, files, incs)
    bad += folder_cycles(files, incs)
    return sorted(bad)


def kernel_folder(path):
    """'attention' for kernels/attention/x.h; None outside a kernels/ subfolder."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "kernels" else None


def folder_cycles(files, incs):
    """Rule 7: every include between two kernels/ folders that lie on a cycle of folders."""
    edges = {}  # (from folder, to folder) -> first 'file:line'
    for f in files:
        a = kernel_folder(f)
        for n, kind, name in incs[f]:
            b = kernel_folder(name) if kind == '"' else None
            if a and b and a != b:
                edges.setdefault((a, b), f"{f}:{n}")
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)

    def reaches(src, dst):
        todo, seen = [src], set()
        while todo:
            x = todo.pop()
            if x == dst:
                return True
            if x not in seen:
                seen.add(x)
                todo.extend(graph.get(x, ()))
        return False
    return [f"{where}: kernels/{a}/ includes kernels/{b}/, which includes kernels/{a}/ "
            f"(directly or through other folders): a cycle of kernel folders"
            for (a, b), where in sorted(edges.items()) if reaches(b, a)]


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    root = os.path.abspath(root)
    if not os.path.isdir(os.path.join(root, "engine")):
        print(f"check_architecture: {root}: no engine/ folder (give the repository root)",
              file=sys.stderr)
        return 2
    bad = check(root)
    for line in bad:
        print(line)
    files = sum(1 for _ in sources(root))
    print(f"check_architecture: {files} files, {len(bad)} violation(s)",
          file=sys.stderr if bad else sys.stdout)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
