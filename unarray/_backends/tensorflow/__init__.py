"""TensorFlow: tf.Tensor and tf.Variable, eagerly and inside tf.function (this module: its facts, importing no TF)."""

from unarray._backends._library import Library

LIBRARY = Library(
    name="tensorflow", shown="TensorFlow",
    distributions=("tensorflow", "tensorflow-cpu"),
    install_cpu="pip install tensorflow-cpu",
    install_gpu="with an NVIDIA GPU on Linux: pip install 'tensorflow[and-cuda]'",
    compiles=True,
    check_seconds=17,
)
