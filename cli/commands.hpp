// Subcommands of the `pipescope` command that live in their own files. Each takes the arguments
// after its name and returns the process exit code.
#pragma once

#include <string>
#include <vector>

// pipescope export-json <in.pftrace> <out.json>
// Exit 0 on success, 1 if the trace cannot be read or is malformed (the message names the byte
// offset) or the output cannot be written, 2 on a usage error or an output path that cannot be a
// file (refused before the trace is read).
int export_json_command(const std::vector<std::string>& args);

// pipescope recover <cut-short trace> [-o OUT] [--force]
// Writes the complete packets of a trace whose last packet was cut short (a killed recording's
// NAME.XXXXXX.tmp) to OUT (default: the name without its .XXXXXX.tmp / .tmp suffix; an existing file
// is kept unless --force), through a temporary file renamed when complete, and prints what was
// recovered and what is missing. Exit 0 when written, 1 if the file cannot be read or written or is
// damaged elsewhere than at its end, 2 on a usage error.
int recover_command(const std::vector<std::string>& args);

// pipescope list [--json]
int list_command(const std::vector<std::string>& args);

// pipescope dedup-restore <archive> <out>
// Rebuilds the file a `dedup` archive was made from (written whole or not at all: a temporary file
// renamed into place). Exit 0 on success, 1 if the archive is corrupt (the message names the byte
// offset) or a file cannot be read or written, 2 on a usage error or an output path that cannot be
// a file (a directory, a device, a FIFO, a symbolic link, a missing directory).
int dedup_restore_command(const std::vector<std::string>& args);

// pipescope stats <trace.pftrace>... [--run NAME] [--json]
// The analysis of each run (docs/analysis.md). Exit 1 if a file cannot be read or --run names no
// run (the message lists the runs), 2 on a usage error.
int stats_command(const std::vector<std::string>& args);
// calibrate_command.cpp: measures the virtual cost model's costs on this machine into a JSON file.
int calibrate_command(const std::vector<std::string>& args);

// pipescope compare <a.pftrace> <b.pftrace>... [--json]
// The runs side by side with ratios against the first. Exit 1 if a file cannot be read.
int compare_command(const std::vector<std::string>& args);

// pipescope annotate <trace> [-o OUT] [--force]
// Writes the trace with the analysis added as Perfetto tracks (annotate_command.cpp) to OUT (default
// NAME.annotated.pftrace; an existing file is kept unless --force). Exit 0 when written, 1 if the
// trace cannot be read (or was annotated already) or OUT cannot be written, 2 on a usage error.
int annotate_command(const std::vector<std::string>& args);

// pipescope sql '<query>' <trace>... [--csv | --json] [--no-module]
// The query's rows for every trace, the module sql/pipescope loaded first, in Perfetto's trace
// processor (sql_command.cpp). Exit 0 when every trace answered, 1 if the trace processor is not
// installed or a trace or the query failed (each named), 2 on a usage error.
int sql_command(const std::vector<std::string>& args);

// pipescope lesson --list | <name> [--workers N] [--size S] [--out DIR] [--no-viewer] [--no-screenshots]
// Records a lesson's runs, prints its story and opens the viewer on it (docs/lessons/). Exit 1 if a
// run fails or the viewer cannot write the screenshots, 2 on a usage error.
int lesson_command(const std::vector<std::string>& args);

// pipescope perfetto <trace> [--port N] [--ui URL] [--no-browser] [--timeout SECONDS]
// Serves the trace on 127.0.0.1 and opens the Perfetto UI on it (or prints the URL). Exit 0 once the
// UI has fetched the whole file, 1 if the file cannot be read, the port cannot be used or --timeout
// passed without a fetch, 130 on Ctrl-C, 2 on a usage error.
int perfetto_command(const std::vector<std::string>& args);

// pipescope scale <workload> --policies a,b --workers 1,2,4 [--size S] [--seed N] [--param k=v]... [--out DIR]
// A scaling sweep on virtual workers (docs/virtual.md): a table per policy, DIR with the traces,
// scale.json and the speedup plot. Exit 1 if a policy could not run on virtual workers or an output
// differs from the serial reference, 2 on a usage error, 3 if DIR cannot be written.
int scale_command(const std::vector<std::string>& args);
