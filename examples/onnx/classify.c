/* classify.c: calls the classifier txc compiled from classifier.onnx
 * (make_model.py writes it; see README.md).
 *
 * classifier.h, which `txc -H` writes, declares
 *
 *     int classifier(int64_t batch, const float *image, float *probs);
 *
 * batch is the model's dynamic dimension (dim_param "batch"); image is
 * [batch, 1, 16, 16] and probs [batch, 10], dense and row-major.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "classifier.h"

const char *txrt_last_error(void);

int
main(void)
{
	enum { BATCH = 4, PIXELS = 16 * 16, CLASSES = 10 };
	float *image = malloc(BATCH * PIXELS * sizeof *image);
	float *probs = malloc(BATCH * CLASSES * sizeof *probs);
	if (!image || !probs)
		return 1;
	for (int b = 0; b < BATCH; b++)
		for (int i = 0; i < PIXELS; i++)
			image[b * PIXELS + i] = (float)(sin(0.05 * i * (b + 1)) * (b - 1.5));
	int rc = classifier(BATCH, image, probs);
	if (rc) {
		fprintf(stderr, "classifier: %s\n", txrt_last_error());
		return 1;
	}
	for (int b = 0; b < BATCH; b++) {
		int best = 0;
		for (int k = 1; k < CLASSES; k++)
			if (probs[b * CLASSES + k] > probs[b * CLASSES + best])
				best = k;
		printf("image %d: class %d (p = %.3f)\n", b, best, probs[b * CLASSES + best]);
	}
	free(image);
	free(probs);
	return 0;
}
