"""PyTorch: torch.Tensor on CPU, CUDA and ROCm (HIP builds report "cuda" devices).

backend (the class and its hot ops), precision (the float32 matmul switch), compiled (what
torch.compile needs), attention and attention_ring (SDPA, and on DTensors), devices (where a tensor
lives), gaps (what torch lacks: wide unsigned integers, integer GEMM), natives (its hot
calls, declared once for the Python op and the C path), sets, and watch (the one hook on torch._dynamo)."""

from unarray._backends._library import Library

LIBRARY = Library(
    name="torch", shown="PyTorch",
    install_cpu="pip install torch --index-url https://download.pytorch.org/whl/cpu",
    install_gpu="with an NVIDIA GPU: pip install torch --index-url https://download.pytorch.org/whl/cu130",
    compiles=True,
    tracer_module="torch._dynamo",
    tracer_watch=True,
    tracing_flag="torch.compiler.is_dynamo_compiling",
    early_types=("Tensor", "nn.Parameter"),
    # Note: NumPy constants join torch tensors often, and loading the NumPy backend (about 0.1 s) is kept off
    # torch's first use: ndarray is resolved once torch.compile is in use.
    trace_types=("numpy.ndarray",),
    lends_attention=("cuda", "rocm"),
    api_names=("dim", "dims", "keepdim", "unbiased", "attn_mask", "normalized_shape", "approximate", "inplace", "input",
               "other", "dropout_p", "enable_gqa"),
)
