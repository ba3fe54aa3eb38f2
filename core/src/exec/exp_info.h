/*
 * exp_info.h -- the configuration part of a run's header (record.h,
 * kbc_exp_info): each experiment of the plan as the outputs show it, in
 * copies that outlive the plan.
 */
#ifndef KBENCH_EXP_INFO_H
#define KBENCH_EXP_INFO_H

#include "config.h"
#include "record.h"

/* One kbc_exp_info per experiment of plan, and their release. */
kbc_exp_info *kbc_exp_infos(const kbc_plan *plan);
void kbc_exp_infos_free(kbc_exp_info *x, size_t n);

#endif
