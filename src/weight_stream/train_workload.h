/* `wafer train`: a GPT-style decoder trained on bytes of text, the replicas
 * data-parallel over the ranks (the resident mode of weight streaming:
 * every replica holds all the weights; streaming from MemoryX ranks is the
 * next step, see docs/train.md). */
#ifndef TRAIN_WORKLOAD_H
#define TRAIN_WORKLOAD_H

#include "wf_workload.h"

extern const wf_workload wf_train_workload;

#endif
