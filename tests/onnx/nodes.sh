#!/bin/sh
# nodes.sh: ONNX's node tests (Debian's libonnx-testdata) of the operators
# txc supports: each model.onnx compiled by txc, run by harness.c on
# test_data_set_0, its outputs compared with the expected ones.  Skips
# (77) where the package is missing.  NODE_TESTS="test_relu ..." runs
# those only; the list below is the cases that pass (the others of these
# operators are listed in txc(1) ONNX MODELS as not supported yet).
set -u
: "${TXC:?TXC must name the txc binary}"
CC=${CC:-cc}
data=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data/node}
[ -d "$data" ] || { echo "SKIP: $data missing (apt-get install libonnx-testdata)"; exit 77; }
src=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-onnx.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
$CC -std=c11 -O1 -D_DEFAULT_SOURCE -I"$src" -c -o "$work/h.o" "$src/tests/onnx/harness.c" &&
for f in onnx/pb.c onnx/model.c onnx/branch.c lang/arena.c lang/intern.c lang/diag.c lang/source.c; do
	$CC -std=c11 -O1 -D_DEFAULT_SOURCE -I"$src" -c -o "$work/$(basename "$f" .c).o" "$src/$f" || exit 99
done || { echo "FAIL: the harness does not build"; exit 1; }
txrt=${abs_top_builddir:-../..}/rt/.libs/libtxrt.a
[ -f "$txrt" ] || { echo "SKIP: no libtxrt.a"; exit 77; }
tests=${NODE_TESTS:-$(sed -n 's/^#T //p' "$0")}
# the sanitized run (TXC_E2E_LIGHT=1, .ci/run) checks txc, not what it
# computes: every other case
[ "${TXC_E2E_LIGHT:-0}" = 1 ] && [ -z "${NODE_TESTS:-}" ] &&
	tests=$(echo "$tests" | awk 'NR % 2')
# "#K test_x NAME...": inputs that the operator needs when txc compiles
# (OneHot's depth, CumSum's axis), which the test gives at run time: a
# copy of the model takes them from test_data_set_0 as initializers
fix_inputs() {
	/usr/bin/python3 - "$@" <<'EOF'
import shutil, sys, onnx
src, dst, names = sys.argv[1], sys.argv[2], sys.argv[3:]
m = onnx.load(src + "/model.onnx")
inits = {t.name for t in m.graph.initializer}
given = [i for i in m.graph.input if i.name not in inits]
j = 0
for i, v in enumerate(given):
    pb = "%s/test_data_set_0/input_%d.pb" % (src, i)
    if v.name in names:
        t = onnx.TensorProto()
        with open(pb, "rb") as f:
            t.ParseFromString(f.read())
        t.name = v.name
        m.graph.initializer.append(t)
        m.graph.input.remove(v)
    else:
        shutil.copy(pb, "%s/test_data_set_0/input_%d.pb" % (dst, j))
        j += 1
i = 0
while True:
    try:
        shutil.copy("%s/test_data_set_0/output_%d.pb" % (src, i), dst + "/test_data_set_0")
    except FileNotFoundError:
        break
    i += 1
onnx.save(m, dst + "/model.onnx")
EOF
}
pass=0 fail=0
for t in $tests; do
	d=$data/$t
	[ -f "$d/model.onnx" ] || { echo "SKIP: $t (not in this libonnx-testdata)"; continue; }
	known=$(sed -n "s/^#K $t //p" "$0")
	if [ -n "$known" ]; then
		/usr/bin/python3 -c 'import onnx' 2>/dev/null ||
			{ echo "SKIP: $t (python3 with onnx is needed to fix its inputs)"; continue; }
		rm -rf "$work/k" && mkdir -p "$work/k/test_data_set_0" &&
		    fix_inputs "$d" "$work/k" $known >"$work/log" 2>&1 ||
			{ fail=$((fail + 1)); echo "FAIL: $t (its inputs not fixed)"; head -5 "$work/log"; continue; }
		d=$work/k
	fi
	nin=$(ls "$d/test_data_set_0" | grep -c '^input_')
	nout=$(ls "$d/test_data_set_0" | grep -c '^output_')
	if "$TXC" -o "$work/net.o" "$d/model.onnx" >"$work/log" 2>&1 &&
	    $CC -o "$work/run" "$work/h.o" "$work"/pb.o "$work"/model.o "$work"/branch.o "$work"/arena.o \
	    "$work"/intern.o "$work"/diag.o "$work"/source.o "$work/net.o" "$txrt" \
	    -lpthread -ldl -lm >>"$work/log" 2>&1 &&
	    "$work/run" "$d/test_data_set_0" "$nin" "$nout" >>"$work/log" 2>&1; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: $t"
		head -5 "$work/log"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
#T test_abs
#T test_add
#T test_add_bcast
#T test_and_bcast4v3d
#T test_argmax_default_axis_example
#T test_argmax_default_axis_example_select_last_index
#T test_argmax_default_axis_random
#T test_argmax_default_axis_random_select_last_index
#T test_argmax_keepdims_example
#T test_argmax_keepdims_example_select_last_index
#T test_argmax_keepdims_random
#T test_argmax_keepdims_random_select_last_index
#T test_argmax_negative_axis_keepdims_example
#T test_argmax_negative_axis_keepdims_example_select_last_index
#T test_argmax_negative_axis_keepdims_random
#T test_argmax_negative_axis_keepdims_random_select_last_index
#T test_argmax_no_keepdims_example
#T test_argmax_no_keepdims_example_select_last_index
#T test_argmax_no_keepdims_random
#T test_argmax_no_keepdims_random_select_last_index
#T test_argmin_default_axis_example
#T test_argmin_default_axis_example_select_last_index
#T test_argmin_default_axis_random
#T test_argmin_default_axis_random_select_last_index
#T test_argmin_keepdims_example
#T test_argmin_keepdims_example_select_last_index
#T test_argmin_keepdims_random
#T test_argmin_keepdims_random_select_last_index
#T test_argmin_negative_axis_keepdims_example
#T test_argmin_negative_axis_keepdims_example_select_last_index
#T test_argmin_negative_axis_keepdims_random
#T test_argmin_negative_axis_keepdims_random_select_last_index
#T test_argmin_no_keepdims_example
#T test_argmin_no_keepdims_example_select_last_index
#T test_argmin_no_keepdims_random
#T test_argmin_no_keepdims_random_select_last_index
#T test_averagepool_1d_default
#T test_averagepool_2d_ceil
#T test_averagepool_2d_default
#T test_averagepool_2d_pads
#T test_averagepool_2d_pads_count_include_pad
#T test_averagepool_2d_precomputed_pads
#T test_averagepool_2d_precomputed_pads_count_include_pad
#T test_averagepool_2d_precomputed_same_upper
#T test_averagepool_2d_precomputed_strides
#T test_averagepool_2d_same_lower
#T test_averagepool_2d_same_upper
#T test_averagepool_2d_strides
#T test_basic_conv_with_padding
#T test_basic_conv_without_padding
#T test_batchnorm_epsilon
#T test_batchnorm_example
#T test_cast_FLOAT_to_DOUBLE
#T test_ceil
#T test_ceil_example
#T test_celu
#T test_celu_expanded
#T test_clip
#T test_clip_default_inbounds
#T test_clip_default_int8_inbounds
#T test_clip_default_int8_max
#T test_clip_default_int8_min
#T test_clip_default_max
#T test_clip_default_min
#T test_clip_example
#T test_clip_inbounds
#T test_clip_outbounds
#T test_clip_splitbounds
#T test_concat_1d_axis_0
#T test_concat_1d_axis_negative_1
#T test_concat_2d_axis_0
#T test_concat_2d_axis_1
#T test_concat_2d_axis_negative_1
#T test_concat_2d_axis_negative_2
#T test_concat_3d_axis_0
#T test_concat_3d_axis_1
#T test_concat_3d_axis_2
#T test_concat_3d_axis_negative_1
#T test_concat_3d_axis_negative_2
#T test_concat_3d_axis_negative_3
#T test_constant
#T test_conv_with_autopad_same
#T test_conv_with_strides_and_asymmetric_padding
#T test_conv_with_strides_no_padding
#T test_conv_with_strides_padding
#T test_convtranspose
#T test_convtranspose_1d
#T test_convtranspose_dilations
#T test_convtranspose_pad
#T test_convtranspose_pads
#T test_cos
#T test_cos_example
#T test_cumsum_1d
#T test_cumsum_1d_exclusive
#T test_cumsum_1d_reverse
#T test_cumsum_1d_reverse_exclusive
#T test_cumsum_2d_axis_0
#T test_cumsum_2d_axis_1
#T test_cumsum_2d_negative_axis
#T test_depthtospace_crd_mode
#T test_depthtospace_crd_mode_example
#T test_depthtospace_dcr_mode
#T test_depthtospace_example
#T test_div
#T test_div_bcast
#T test_div_example
#T test_dropout_default
#T test_dropout_default_old
#T test_dropout_default_ratio
#T test_dropout_random_old
#T test_elu
#T test_elu_default
#T test_elu_example
#T test_equal
#T test_equal_bcast
#T test_erf
#T test_exp
#T test_exp_example
#T test_flatten_axis0
#T test_flatten_axis1
#T test_flatten_axis2
#T test_flatten_axis3
#T test_flatten_default_axis
#T test_flatten_negative_axis1
#T test_flatten_negative_axis2
#T test_flatten_negative_axis3
#T test_flatten_negative_axis4
#T test_floor
#T test_floor_example
#T test_gather_0
#T test_gather_1
#T test_gather_2d_indices
#T test_gather_elements_0
#T test_gather_elements_1
#T test_gather_elements_negative_indices
#T test_gather_negative_indices
#T test_gemm_all_attributes
#T test_gemm_alpha
#T test_gemm_beta
#T test_gemm_default_matrix_bias
#T test_gemm_default_no_bias
#T test_gemm_default_scalar_bias
#T test_gemm_default_single_elem_vector_bias
#T test_gemm_default_vector_bias
#T test_gemm_default_zero_bias
#T test_gemm_transposeA
#T test_gemm_transposeB
#T test_globalaveragepool
#T test_globalaveragepool_precomputed
#T test_globalmaxpool
#T test_globalmaxpool_precomputed
#T test_greater
#T test_greater_equal_bcast
#T test_hardmax_axis_0
#T test_hardmax_axis_1
#T test_hardmax_axis_2
#T test_hardmax_default_axis
#T test_hardmax_example
#T test_hardmax_negative_axis
#T test_hardmax_one_hot
#T test_hardsigmoid
#T test_hardsigmoid_default
#T test_hardsigmoid_example
#T test_hardswish
#T test_hardswish_expanded
#T test_identity
#T test_if
#T test_instancenorm_epsilon
#T test_instancenorm_example
#T test_isinf
#T test_isinf_negative
#T test_isinf_positive
#T test_isnan
#T test_layer_normalization_2d_axis0
#T test_layer_normalization_3d_axis1_epsilon
#T test_layer_normalization_4d_axis_negative_2
#T test_layer_normalization_default_axis
#T test_leakyrelu
#T test_leakyrelu_default
#T test_leakyrelu_example
#T test_less_bcast
#T test_less_equal
#T test_log
#T test_log_example
#T test_logsoftmax_axis_0
#T test_logsoftmax_axis_1
#T test_logsoftmax_axis_2
#T test_logsoftmax_default_axis
#T test_logsoftmax_example_1
#T test_logsoftmax_example_1_expanded
#T test_logsoftmax_large_number
#T test_logsoftmax_negative_axis
#T test_lrn
#T test_lrn_default
#T test_matmul_2d
#T test_matmul_3d
#T test_matmul_4d
#T test_max_example
#T test_max_float16
#T test_max_float32
#T test_max_float64
#T test_max_int32
#T test_max_one_input
#T test_max_two_inputs
#T test_maxpool_1d_default
#T test_maxpool_2d_ceil
#T test_maxpool_2d_default
#T test_maxpool_2d_dilations
#T test_maxpool_2d_pads
#T test_maxpool_2d_precomputed_pads
#T test_maxpool_2d_precomputed_same_upper
#T test_maxpool_2d_precomputed_strides
#T test_maxpool_2d_same_lower
#T test_maxpool_2d_same_upper
#T test_maxpool_2d_strides
#T test_mean_example
#T test_mean_one_input
#T test_mean_two_inputs
#T test_min_example
#T test_min_float16
#T test_min_float32
#T test_min_float64
#T test_min_one_input
#T test_min_two_inputs
#T test_min_uint8
#T test_mod_broadcast
#T test_mod_int64_fmod
#T test_mod_mixed_sign_float16
#T test_mod_mixed_sign_float32
#T test_mod_mixed_sign_float64
#T test_mod_mixed_sign_int16
#T test_mod_mixed_sign_int32
#T test_mod_mixed_sign_int64
#T test_mod_mixed_sign_int8
#T test_mod_uint16
#T test_mod_uint32
#T test_mod_uint64
#T test_mod_uint8
#T test_mul
#T test_mul_bcast
#T test_mul_example
#T test_mvn
#T test_mvn_expanded
#T test_neg
#T test_neg_example
#T test_not_2d
#T test_onehot_negative_indices
#T test_onehot_with_axis
#T test_onehot_with_negative_axis
#T test_onehot_without_axis
#T test_or_bcast3v1d
#T test_pow
#T test_pow_bcast_array
#T test_pow_bcast_scalar
#T test_pow_example
#T test_prelu_broadcast
#T test_prelu_example
#T test_reciprocal
#T test_reciprocal_example
#T test_reduce_l1_default_axes_keepdims_example
#T test_reduce_l1_default_axes_keepdims_random
#T test_reduce_l1_do_not_keepdims_example
#T test_reduce_l1_do_not_keepdims_random
#T test_reduce_l1_keep_dims_example
#T test_reduce_l1_keep_dims_random
#T test_reduce_l1_negative_axes_keep_dims_example
#T test_reduce_l1_negative_axes_keep_dims_random
#T test_reduce_l2_default_axes_keepdims_example
#T test_reduce_l2_default_axes_keepdims_random
#T test_reduce_l2_do_not_keepdims_example
#T test_reduce_l2_do_not_keepdims_random
#T test_reduce_l2_keep_dims_example
#T test_reduce_l2_keep_dims_random
#T test_reduce_l2_negative_axes_keep_dims_example
#T test_reduce_l2_negative_axes_keep_dims_random
#T test_reduce_log_sum
#T test_reduce_log_sum_asc_axes
#T test_reduce_log_sum_default
#T test_reduce_log_sum_desc_axes
#T test_reduce_log_sum_exp_default_axes_keepdims_example
#T test_reduce_log_sum_exp_default_axes_keepdims_random
#T test_reduce_log_sum_exp_do_not_keepdims_example
#T test_reduce_log_sum_exp_do_not_keepdims_random
#T test_reduce_log_sum_exp_keepdims_example
#T test_reduce_log_sum_exp_keepdims_random
#T test_reduce_log_sum_exp_negative_axes_keepdims_example
#T test_reduce_log_sum_exp_negative_axes_keepdims_random
#T test_reduce_log_sum_negative_axes
#T test_reduce_max_default_axes_keepdim_example
#T test_reduce_max_default_axes_keepdims_random
#T test_reduce_max_do_not_keepdims_example
#T test_reduce_max_do_not_keepdims_random
#T test_reduce_max_keepdims_example
#T test_reduce_max_keepdims_random
#T test_reduce_max_negative_axes_keepdims_example
#T test_reduce_max_negative_axes_keepdims_random
#T test_reduce_mean_default_axes_keepdims_example
#T test_reduce_mean_default_axes_keepdims_random
#T test_reduce_mean_do_not_keepdims_example
#T test_reduce_mean_do_not_keepdims_random
#T test_reduce_mean_keepdims_example
#T test_reduce_mean_keepdims_random
#T test_reduce_mean_negative_axes_keepdims_example
#T test_reduce_mean_negative_axes_keepdims_random
#T test_reduce_min_default_axes_keepdims_example
#T test_reduce_min_default_axes_keepdims_random
#T test_reduce_min_do_not_keepdims_example
#T test_reduce_min_do_not_keepdims_random
#T test_reduce_min_keepdims_example
#T test_reduce_min_keepdims_random
#T test_reduce_min_negative_axes_keepdims_example
#T test_reduce_min_negative_axes_keepdims_random
#T test_reduce_prod_default_axes_keepdims_example
#T test_reduce_prod_default_axes_keepdims_random
#T test_reduce_prod_do_not_keepdims_example
#T test_reduce_prod_do_not_keepdims_random
#T test_reduce_prod_keepdims_example
#T test_reduce_prod_keepdims_random
#T test_reduce_prod_negative_axes_keepdims_example
#T test_reduce_prod_negative_axes_keepdims_random
#T test_reduce_sum_square_default_axes_keepdims_example
#T test_reduce_sum_square_default_axes_keepdims_random
#T test_reduce_sum_square_do_not_keepdims_example
#T test_reduce_sum_square_do_not_keepdims_random
#T test_reduce_sum_square_keepdims_example
#T test_reduce_sum_square_keepdims_random
#T test_reduce_sum_square_negative_axes_keepdims_example
#T test_reduce_sum_square_negative_axes_keepdims_random
#T test_relu
#T test_round
#T test_selu
#T test_selu_default
#T test_selu_example
#T test_shape
#T test_shape_clip_start
#T test_shape_end_negative_1
#T test_shape_example
#T test_shape_start_1
#T test_shape_start_1_end_negative_1
#T test_shrink_hard
#T test_shrink_soft
#T test_sigmoid
#T test_sigmoid_example
#T test_sign
#T test_sin
#T test_sin_example
#T test_size_example
#T test_softmax_axis_0
#T test_softmax_axis_1
#T test_softmax_axis_2
#T test_softmax_default_axis
#T test_softmax_example
#T test_softmax_example_expanded
#T test_softmax_large_number
#T test_softmax_negative_axis
#T test_softplus
#T test_softplus_example
#T test_softsign
#T test_softsign_example
#T test_spacetodepth
#T test_spacetodepth_example
#T test_split_equal_parts_1d
#T test_split_equal_parts_2d
#T test_split_equal_parts_default_axis
#T test_sqrt
#T test_sqrt_example
#T test_squeeze
#T test_squeeze_negative_axes
#T test_sub
#T test_sub_bcast
#T test_sub_example
#T test_sum_example
#T test_sum_one_input
#T test_sum_two_inputs
#T test_tanh
#T test_tanh_example
#T test_thresholdedrelu
#T test_thresholdedrelu_default
#T test_thresholdedrelu_example
#T test_transpose_all_permutations_0
#T test_transpose_all_permutations_1
#T test_transpose_all_permutations_2
#T test_transpose_all_permutations_3
#T test_transpose_all_permutations_4
#T test_transpose_all_permutations_5
#T test_transpose_default
#T test_tril
#T test_tril_neg
#T test_tril_one_row_neg
#T test_tril_out_neg
#T test_tril_out_pos
#T test_tril_pos
#T test_tril_square
#T test_tril_square_neg
#T test_triu
#T test_triu_neg
#T test_triu_one_row
#T test_triu_out_neg_out
#T test_triu_out_pos
#T test_triu_pos
#T test_triu_square
#T test_triu_square_neg
#T test_unsqueeze_axis_0
#T test_unsqueeze_axis_1
#T test_unsqueeze_axis_2
#T test_unsqueeze_axis_3
#T test_unsqueeze_negative_axes
#T test_unsqueeze_three_axes
#T test_unsqueeze_two_axes
#T test_unsqueeze_unsorted_axes
#T test_where_example
#T test_where_long_example
#T test_xor_bcast4v2d
#K test_cumsum_1d axis
#K test_cumsum_1d_exclusive axis
#K test_cumsum_1d_reverse axis
#K test_cumsum_1d_reverse_exclusive axis
#K test_cumsum_2d_axis_0 axis
#K test_cumsum_2d_axis_1 axis
#K test_cumsum_2d_negative_axis axis
#K test_onehot_negative_indices depth
#K test_onehot_with_axis depth
#K test_onehot_with_negative_axis depth
#K test_onehot_without_axis depth
