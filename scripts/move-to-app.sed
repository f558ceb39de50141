# Issue 47 item 2: the runs moved from elk-reports to elk-app (the application crate). Applied
# to every Rust file of the CLI, Python, the benches and the tests (and to the docs), it turns
# each path to a moved module into its new one; re-apply it to a branch's edits on merge:
#   sed -i -f scripts/move-to-app.sed $(git ls-files 'src/*.rs' 'python/src/*.rs' 'benchmarks/*.rs' 'tests/*.rs')
#   cargo fmt   # `elk_app` sorts before `elk_model` among the imports, and shorter paths reflow
# What stayed in elk-reports (report, plot, html, csv_text, finding, the studies' writers,
# studies::{run, run_with, STUDIES}) keeps its path.
s/elk_reports::portfolio\b/elk_app::portfolio/g
s/elk_reports::compare\b/elk_app::compare/g
s/elk_reports::gap\b/elk_app::gap/g
s/elk_reports::moe\b/elk_app::moe/g
s/elk_reports::cell\b/elk_app::cell/g
s/elk_reports::grid\b/elk_app::grid/g
s/elk_reports::sweep\b/elk_app::sweep/g
s/elk_reports::bound\b/elk_app::bound/g
s/elk_reports::dominant\b/elk_app::dominant/g
s/elk_reports::layer_ranking\b/elk_app::layer_ranking/g
s/elk_reports::zoo_list\b/elk_app::zoo_list/g
# The studies' progress and statistics are the runs'; their dispatch and names stay.
s/elk_reports::studies::\(Step\|Steps\|OnStep\|summary\)\b/elk_app::studies::\1/g
s/^use elk_reports::studies::{run_with, Step, STUDIES};$/use elk_app::studies::Step;\nuse elk_reports::studies::{run_with, STUDIES};/
# The one error type of both crates.
s/elk_reports::ReportError\b/elk_app::AppError/g
s/elk_reports::Result\b/elk_app::Result/g
# Within elk-reports, the results summary left `finding` (a report's headline) for `summary`,
# so that no file of the crate imports in a cycle (finding.rs read the studies' names, and
# the studies' writers read finding.rs).
s/elk_reports::finding::\(summary_order\|summary\|CHANGES\)\b/elk_reports::summary::\1/g
