// Command vpa-reference replays a canonical trace through the real Kubernetes VPA recommender
// (the model and logic packages of k8s.io/autoscaler/vertical-pod-autoscaler, at the version
// go.mod pins, with that version's default configuration) and prints the target it recommends
// after every sample, and the lower and upper bounds the updater acts on:
//
//	vpa-reference TRACE.csv > targets.csv
//
// The trace needs the columns timestamp (unix s), pod.id, cpu.usage.cores and mem.working.set
// (bytes); other columns are ignored. Each pod.id is one execution with an aggregate state of
// its own, fed its samples in file order. Output: one row per sample, executions in order of
// first appearance (as phasescale's model::read_trace orders them):
//
//	pod.id,timestamp,cpu_target_cores,memory_target_bytes,cpu_lower_cores,memory_lower_bytes,cpu_upper_cores,memory_upper_bytes
package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/autoscaler/vertical-pod-autoscaler/pkg/recommender/config"
	"k8s.io/autoscaler/vertical-pod-autoscaler/pkg/recommender/logic"
	"k8s.io/autoscaler/vertical-pod-autoscaler/pkg/recommender/model"
)

// The trace's columns, as phasescale names them (model/README.md).
const (
	timeColumn   = "timestamp"
	idColumn     = "pod.id"
	cpuColumn    = "cpu.usage.cores"
	memoryColumn = "mem.working.set"
)

// The one container of each execution's pod.
const containerName = "main"

type sample struct {
	timestamp string // as written in the trace, echoed in the output
	at        time.Time
	cpu       float64 // cores
	memory    float64 // bytes
}

type execution struct {
	id      string
	samples []sample
}

func main() {
	if len(os.Args) != 2 || strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprintln(os.Stderr, "usage: vpa-reference TRACE.csv")
		os.Exit(2)
	}
	executions, err := readTrace(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "vpa-reference:", err)
		os.Exit(1)
	}
	if err := replay(executions, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "vpa-reference:", err)
		os.Exit(1)
	}
}

// replay feeds every execution to the recommender built as the VPA recommender binary builds
// it (routines.NewRecommenderController): the aggregation and recommendation settings of
// config.DefaultRecommenderConfig, the default flags.
func replay(executions []execution, out io.Writer) error {
	cfg := config.DefaultRecommenderConfig()
	model.InitializeAggregationsConfig(model.NewAggregationsConfig(
		cfg.MemoryAggregationInterval,
		cfg.MemoryAggregationIntervalCount,
		cfg.MemoryHistogramDecayHalfLife,
		cfg.CpuHistogramDecayHalfLife,
		cfg.OOMBumpUpRatio,
		cfg.OOMMinBumpUp,
	))
	recommender := logic.CreatePodResourceRecommender(logic.RecommendationConfig{
		SafetyMarginFraction:       cfg.SafetyMarginFraction,
		PodMinCPUMillicores:        cfg.PodMinCPUMillicores,
		PodMinMemoryMb:             cfg.PodMinMemoryMb,
		TargetCPUPercentile:        cfg.TargetCPUPercentile,
		LowerBoundCPUPercentile:    cfg.LowerBoundCPUPercentile,
		UpperBoundCPUPercentile:    cfg.UpperBoundCPUPercentile,
		ConfidenceIntervalCPU:      cfg.ConfidenceIntervalCPU,
		TargetMemoryPercentile:     cfg.TargetMemoryPercentile,
		LowerBoundMemoryPercentile: cfg.LowerBoundMemoryPercentile,
		UpperBoundMemoryPercentile: cfg.UpperBoundMemoryPercentile,
		ConfidenceIntervalMemory:   cfg.ConfidenceIntervalMemory,
	})

	w := csv.NewWriter(out)
	if err := w.Write([]string{"pod.id", "timestamp", "cpu_target_cores", "memory_target_bytes",
		"cpu_lower_cores", "memory_lower_bytes", "cpu_upper_cores", "memory_upper_bytes"}); err != nil {
		return err
	}
	for _, e := range executions {
		// One container of one pod: its own aggregate state (the VPA's per-workload histograms)
		// and the ContainerState that turns its samples into CPU samples and memory peaks. The
		// model of this version takes no request with a sample (CPU samples weigh
		// minSampleWeight each); the request is left empty.
		aggregate := model.NewAggregateContainerState()
		container := model.NewContainerState(model.Resources{}, aggregate)
		states := model.ContainerNameToAggregateStateMap{containerName: aggregate}
		for _, s := range e.samples {
			// As the cluster feeder adds a metrics snapshot: one CPU and one memory sample, both
			// starting at the snapshot's time. Discarded samples (a repeated time) are not errors.
			container.AddSample(&model.ContainerUsageSample{
				MeasureStart: s.at, Usage: model.CPUAmountFromCores(s.cpu), Resource: model.ResourceCPU})
			container.AddSample(&model.ContainerUsageSample{
				MeasureStart: s.at, Usage: model.MemoryAmountFromBytes(s.memory), Resource: model.ResourceMemory})

			r := recommender.GetRecommendedPodResources(states)[containerName]
			row := []string{e.id, s.timestamp}
			for _, resources := range []model.Resources{r.Target, r.LowerBound, r.UpperBound} {
				cpu, okCPU := resources[model.ResourceCPU]
				memory, okMemory := resources[model.ResourceMemory]
				if !okCPU || !okMemory {
					return fmt.Errorf("%s at %s: no CPU or memory recommendation", e.id, s.timestamp)
				}
				row = append(row, strconv.FormatFloat(model.CoresFromCPUAmount(cpu), 'f', -1, 64),
					strconv.FormatInt(int64(memory), 10))
			}
			if err := w.Write(row); err != nil {
				return err
			}
		}
	}
	w.Flush()
	return w.Error()
}

// readTrace reads the executions of one canonical trace file.
func readTrace(path string) ([]execution, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty file", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	index := map[string]int{}
	for i, name := range header {
		index[strings.TrimSpace(name)] = i
	}
	columns := map[string]int{}
	for _, name := range []string{timeColumn, idColumn, cpuColumn, memoryColumn} {
		i, ok := index[name]
		if !ok {
			return nil, fmt.Errorf("%s:1: no column %q", path, name)
		}
		columns[name] = i
	}

	var executions []execution
	byID := map[string]int{}
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		number := func(column string) (float64, error) {
			text := strings.TrimSpace(record[columns[column]])
			v, err := strconv.ParseFloat(text, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%s:%d: %s: not a number: %q", path, line, column, text)
			}
			return v, nil
		}
		var s sample
		s.timestamp = strings.TrimSpace(record[columns[timeColumn]])
		seconds, err := number(timeColumn)
		if err != nil {
			return nil, err
		}
		whole := math.Floor(seconds)
		s.at = time.Unix(int64(whole), int64(math.Round((seconds-whole)*1e9))).UTC()
		if s.cpu, err = number(cpuColumn); err != nil {
			return nil, err
		}
		if s.memory, err = number(memoryColumn); err != nil {
			return nil, err
		}
		id := record[columns[idColumn]]
		k, seen := byID[id]
		if !seen {
			k = len(executions)
			byID[id] = k
			executions = append(executions, execution{id: id})
		}
		e := &executions[k]
		if n := len(e.samples); n > 0 && s.at.Before(e.samples[n-1].at) {
			return nil, fmt.Errorf("%s:%d: %s: time goes backwards for %s", path, line, timeColumn, id)
		}
		e.samples = append(e.samples, s)
	}
	if len(executions) == 0 {
		return nil, fmt.Errorf("%s: no samples", path)
	}
	return executions, nil
}
