// The HTML report (`tgemm-db report`): one self-contained page (inline SVG and CSS, no script,
// no network) that shows, per device, a roofline against the measured ceilings, the
// tgemm/cuBLAS ratio per problem, how much tuning mattered, the top configs and the failures.
#pragma once

#include <string>

#include "db/tuning_db.h"
#include "src/core/problem.h"

namespace tgemm {

struct HtmlReportOptions {
  int top_configs = 5;  // ok trials listed per problem in the top-configs tables
};

// The whole page. Throws Error only when the database cannot be read.
std::string html_report(TuningDb& db, const HtmlReportOptions& options = {});

// 2*M*N*K over the minimum bytes: A and B read once, C written once (and read when beta is
// not zero), in the problem's element sizes. The roofline's x.
double arithmetic_intensity(const Problem& problem);

// "f32 NN 4096x4096x4096" (plus " beta" when C is read): what a chart labels a problem by.
std::string short_label(const Problem& problem);

}  // namespace tgemm
