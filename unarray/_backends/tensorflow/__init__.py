"""TensorFlow: tf.Tensor and tf.Variable, eagerly and inside tf.function.

This module holds the library's facts as plain data, importing no TensorFlow; every other module of the package
imports tensorflow at its top (the registry imports them once a TF tensor is seen or the backend is named).
"""

from unarray._backends._library import Library

LIBRARY = Library(
    name="tensorflow", shown="TensorFlow",
    distributions=("tensorflow", "tensorflow-cpu"),
    install_cpu="pip install tensorflow-cpu",
    install_gpu="with an NVIDIA GPU on Linux: pip install 'tensorflow[and-cuda]'",
    compiles=True,
    check_seconds=17,
)
