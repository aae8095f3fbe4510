// pipescope — everything a program needs: the scheduler, fork-join task groups, pipe_while, stage
// graphs (graph::program, graph::run), annotate, and trace_session to record it.
#pragma once

#include <pipescope/annotate.hpp>
#include <pipescope/graph/program.hpp>
#include <pipescope/pipeline.hpp>
#include <pipescope/policies.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/task_group.hpp>
#include <pipescope/trace_session.hpp>
