#!/bin/sh
# cuda.sh: genmodels.py's networks compiled with --target=cuda and run in
# libtxrt's GPU emulator, against numpy's outputs, through models.sh
# (MODELS_TARGET=cuda): the generated cuda schedules, and the weights
# (constant tensors) copied to device memory on the entry point's first
# call (txrt_cuda_constant).  The emulator checks every access, so an
# out-of-bounds read or a shared-memory race fails the run.  ocr_cls's
# Reshape of a pooled dynamic H * W is bounded by the sizes' guards
# around its kernels.  MODELS="mlp" runs those.
MODELS_TARGET=cuda
MODELS=${MODELS:-mlp lenet resnet_tiny gated-mlp bn_runtime outputs dynamic audio_cnn mlp_dyn \
mobilenet_v2 gated_norm shape_ops upsample ocr_cls logmel_cnn branches}
export MODELS_TARGET MODELS
exec "${SHELL:-sh}" "$(dirname "$0")/models.sh"
