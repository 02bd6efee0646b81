"""TensorFlow: tf.Tensor and tf.Variable, eagerly and inside tf.function.

backend (the class: devices, dtypes, the TF32 switch, the hot ops) and the array-API namespace unarray
writes for TensorFlow, which has none of its own (xp assembles it from the other modules, one per
category of the standard), fast (eager CPU paths)."""

from unarray._backends._library import Library

LIBRARY = Library(
    name="tensorflow", shown="TensorFlow",
    distributions=("tensorflow", "tensorflow-cpu"),
    install_cpu="pip install tensorflow-cpu",
    install_gpu="with an NVIDIA GPU on Linux: pip install 'tensorflow[and-cuda]'",
    compiles=True,
    check_seconds=17,
)
