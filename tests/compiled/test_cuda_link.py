"""compiled/cuda/link.py: the per-pattern code compiled by NVRTC and linked by nvJitLink
with a kernel that calls it, on the CPU (neither needs a GPU or the CUDA toolkit): a
kernel calling the three chain functions links with the stub and with a real layout's
generated code (the kernel as PTX or as a relocatable object), an unresolved function is
an error naming it, and NVRTC's refusal carries its log."""
import weakref

import pytest

from caspar_backend.compiled.cuda import link, straight

CC = (9, 0)

#: a kernel calling the chain functions as the batch kernel's CUDA build does
CALLER = """
extern "C" __device__ int caspar_gen_eliminate(const double*, double*, double*, double*);
extern "C" __device__ int caspar_gen_forward(const double*, double*);
extern "C" __device__ int caspar_gen_backward(const double*, double*);
extern "C" __global__ void chains(const double* C, double* L, double* D, double* Di,
                                  double* t, int* r) {
    r[0] = caspar_gen_eliminate(C, L, D, Di);
    r[1] = caspar_gen_forward(L, t);
    r[2] = caspar_gen_backward(L, t);
}
"""


@pytest.fixture(scope="module", autouse=True)
def _tools():
    pytest.importorskip("cuda.bindings")
    try:
        link.compile_ptx("__device__ int f() { return 0; }", CC)
        link.link_cubin([(link.PTX, link.compile_ptx(straight.STUB, CC))], CC)
    except Exception as exc:     # libnvrtc / libnvJitLink not installed
        pytest.skip(f"NVRTC or nvJitLink not usable: {exc}")


def _is_cubin(b: bytes) -> bool:
    return b[:4] == b"\x7fELF" and len(b) > 64


def test_caller_links_with_the_stub_as_ptx_or_object():
    stub = link.compile_ptx(straight.STUB, CC)
    assert _is_cubin(link.link_cubin([(link.PTX, link.compile_ptx(CALLER, CC)),
                                      (link.PTX, stub)], CC))
    assert _is_cubin(link.link_cubin([(link.OBJECT, link.compile_object(CALLER, CC)),
                                      (link.PTX, stub)], CC))


def test_caller_links_with_a_layouts_generated_chains():
    from tests.compiled.test_cuda_straight import _layout

    lay = _layout("ik")
    gen = link.compile_ptx(straight.source(lay), CC)
    assert b"caspar_gen_eliminate" in gen and b"caspar_gen_backward" in gen
    assert _is_cubin(link.link_cubin([(link.OBJECT, link.compile_object(CALLER, CC)),
                                      (link.PTX, gen)], CC))


def test_unresolved_chain_is_an_error_naming_it():
    with pytest.raises(link.LinkError, match="caspar_gen_"):
        link.link_cubin([(link.PTX, link.compile_ptx(CALLER, CC))], CC)


def test_nvrtc_refusal_carries_its_log():
    with pytest.raises(link.LinkError, match="broken.cu.*undefined"):
        link.compile_ptx("__device__ int f() { return undefined_name; }", CC, "broken.cu")


@pytest.mark.slow
def test_batch_kernel_with_extern_chains_links_with_stub_and_generated_code():
    """The rows kernel of the 'extern' variant (compiled/cuda/chains.py), compiled without
    a GPU (offline.target: NVVM), calls the three chain functions and links with the stub
    and with IK's generated chains into cubins (nvJitLink, ~30 s each on the 2-core VM);
    the loops variant calls none."""
    from caspar_backend.compiled.cuda import offline, patterns, tape_code

    root = offline.toolkit()
    if root is None:
        pytest.skip("no CUDA toolkit with libdevice (NVVM)")
    from tests.compiled.test_cuda_straight import _layout

    with offline.target(CC, root):
        ext = offline.ptx(False, CC, chains="extern").encode()
    for name in ("caspar_gen_eliminate", "caspar_gen_forward", "caspar_gen_backward",
                 "caspar_gen_tape"):
        assert f".extern .func  (.param .b32 func_retval0) {name}".encode() in ext
    with pytest.raises(link.LinkError, match="caspar_gen_"):
        link.link_cubin([(link.PTX, ext)], CC)
    for code in (straight.STUB + tape_code.STUB, patterns.source(_layout("ik"))):
        assert _is_cubin(link.link_cubin([(link.PTX, ext),
                                          (link.PTX, link.compile_ptx(code, CC))], CC))


@pytest.mark.slow
def test_pattern_kernels_built_cached_and_rebuilt(tmp_path, monkeypatch):
    """compiled/cuda/patterns.py without a GPU: the extern variant's kernel state (PTX)
    and a pattern's linked cubin are built once and then read from the cache; the
    dispatcher rebuilt around the cubin carries the linked cubin for the target, and two
    patterns (IK, the stub past the cap) get their own."""
    from caspar_backend.compiled.cuda import offline, patterns, tape_code

    root = offline.toolkit()
    if root is None:
        pytest.skip("no CUDA toolkit with libdevice (NVVM)")
    from caspar_backend.compiled.cuda.prebuilt import _cubin_bytes
    from tests.compiled.test_cuda_straight import _layout

    monkeypatch.setenv("CASPAR_CACHE_DIR", str(tmp_path))
    lay = _layout("ik")
    with offline.target(CC, root):
        state = patterns.kernel_state(CC)
        assert patterns.kernel_path(CC).is_file()
        assert any(b"caspar_gen_eliminate" in m for m in patterns.kernel_ptx(state))
        assert any(b"caspar_gen_tape" in m for m in patterns.kernel_ptx(state))
        cubin = patterns.pattern_cubin(lay, CC, state)
        key = patterns.pattern_key(lay)
        assert patterns.cubin_path(key, CC).read_bytes() == cubin and _is_cubin(cubin)
        d = patterns.kernel_for(lay, CC)
        assert patterns.kernel_for(lay, CC) is d
        (k,) = d.overloads.values()
        assert _cubin_bytes(k._codelibrary._cubin_cache[CC]) == cubin
        # past both caps: the stubs (the kernel's loops and interpreter)
        monkeypatch.setattr(straight, "MAX_OPERATIONS", 0)
        monkeypatch.setattr(tape_code, "MAX_ENTRIES", 0)
        monkeypatch.setattr(patterns, "_keys", weakref.WeakKeyDictionary())   # keys again
        stub = patterns.kernel_for(lay, CC)
        assert stub is not d and patterns.cubin_path(patterns.pattern_key(lay), CC).is_file()
