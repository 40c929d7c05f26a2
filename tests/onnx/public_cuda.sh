#!/bin/sh
# public_cuda.sh: public.sh's openWakeWord models (its melspectrogram, whose
# total over the batch is the cuda generator's G6, its audio embedding CNN,
# and wake-word heads, hey_jarvis's If among them) compiled with
# --target=cuda and run in libtxrt's GPU emulator against onnxruntime,
# which checks every access.  The PaddleOCR models are left to the cpu
# (the emulator runs a thread at a time: minutes each).
PUBLIC_TARGET=cuda
PUBLIC_MODELS=${PUBLIC_MODELS:-melspectrogram embedding_model hey_jarvis_v0_1 alexa_v0_1 \
timer_v0_1 hello_deepa ch_ppocr_mobile_v2_0_cls_infer}
export PUBLIC_TARGET PUBLIC_MODELS
exec "${SHELL:-sh}" "$(dirname "$0")/public.sh"
