package apiserver

import (
	"fmt"
	"maps"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// batch/v1 (kubernetes pkg/registry/batch/job, cronjob): strategies,
// defaults (pkg/apis/batch/v1/defaults.go), a Job's selector and printers.
var batchStrategies = map[schema.GroupResource]strategy{
	{Group: "batch", Resource: "jobs"}: {
		Table: jobTable, Generation: true, ResetStatusOnCreate: true,
		ValidateObject: validatePodSpecAt(field.NewPath("spec", "template", "spec"), func(obj runtime.Object) *corev1.PodSpec { return &obj.(*batchv1.Job).Spec.Template.Spec }),
		Fields: func(obj runtime.Object) fields.Set {
			return fields.Set{"status.successful": strconv.Itoa(int(obj.(*batchv1.Job).Status.Succeeded))}
		},
		FieldLabel: func(label, value string) (string, string, error) {
			switch label {
			case "metadata.name", "metadata.namespace", "status.successful":
				return label, value, nil
			}
			return "", "", fmt.Errorf("field label %q not supported for Job", label)
		},
		Default:          defaultJob,
		PrepareForCreate: prepareJobForCreate,
	},
	{Group: "batch", Resource: "cronjobs"}: {
		ShortNames: []string{"cj"}, Table: cronJobTable, Generation: true, ResetStatusOnCreate: true,
		ValidateObject: validatePodSpecAt(field.NewPath("spec", "jobTemplate", "spec", "template", "spec"), func(obj runtime.Object) *corev1.PodSpec {
			return &obj.(*batchv1.CronJob).Spec.JobTemplate.Spec.Template.Spec
		}),
		Default: defaultCronJob,
	},
}

// defaultJob is SetDefaults_Job (pkg/apis/batch/v1/defaults.go) and the
// template's pod defaults (transcript 93).
func defaultJob(obj runtime.Object, _ metav1.Time) {
	j := obj.(*batchv1.Job)
	s := &j.Spec
	if s.Completions == nil && s.Parallelism == nil {
		s.Completions = ptr.To[int32](1)
		s.Parallelism = ptr.To[int32](1)
	}
	if s.Parallelism == nil {
		s.Parallelism = ptr.To[int32](1)
	}
	if s.BackoffLimit == nil {
		s.BackoffLimit = ptr.To[int32](6)
		if s.BackoffLimitPerIndex != nil {
			s.BackoffLimit = ptr.To[int32](1<<31 - 1)
		}
	}
	if s.Template.Labels != nil && len(j.Labels) == 0 {
		j.Labels = maps.Clone(s.Template.Labels)
	}
	if s.CompletionMode == nil {
		s.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if s.Suspend == nil {
		s.Suspend = ptr.To(false)
	}
	if s.PodReplacementPolicy == nil {
		s.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		if s.PodFailurePolicy != nil {
			s.PodReplacementPolicy = ptr.To(batchv1.Failed)
		}
	}
	if s.ManualSelector == nil {
		s.ManualSelector = ptr.To(false)
	}
	defaultPodSpec(&s.Template.Spec)
}

// prepareJobForCreate is the Job strategy's generateSelector, which its
// Validate calls before validating
// (pkg/registry/batch/job/strategy.go): the template is labelled with
// the Job's name and uid, and selected by its uid. The labels then reach
// the Job's own metadata as SetDefaults_Job copies them when the stored
// Job is read back (transcript 93: no one owns them).
func prepareJobForCreate(obj runtime.Object, _ metav1.Time) {
	j := obj.(*batchv1.Job)
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return
	}
	t := &j.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for _, k := range []string{"job-name", batchv1.JobNameLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = j.Name
		}
	}
	for _, k := range []string{"controller-uid", batchv1.ControllerUidLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = string(j.UID)
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(j.UID)
	}
	if len(j.Labels) == 0 {
		j.Labels = maps.Clone(t.Labels)
	}
}

// defaultCronJob is SetDefaults_CronJob, and its job template's pod defaults.
func defaultCronJob(obj runtime.Object, _ metav1.Time) {
	s := &obj.(*batchv1.CronJob).Spec
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if s.Suspend == nil {
		s.Suspend = ptr.To(false)
	}
	if s.SuccessfulJobsHistoryLimit == nil {
		s.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if s.FailedJobsHistoryLimit == nil {
		s.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	defaultPodSpec(&s.JobTemplate.Spec.Template.Spec)
}

// jobTable: jobColumnDefinitions and printJob. A running job's
// Duration is measured to the server's clock (upstream: time.Since).
var jobTable = &tablePrinter{
	columns: columns(
		nameColumn,
		metav1.TableColumnDefinition{Name: "Status", Type: "string", Description: "Status of the job."},
		metav1.TableColumnDefinition{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
		metav1.TableColumnDefinition{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
		ageColumn,
		containersColumns,
		metav1.TableColumnDefinition{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	),
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		j := obj.(*batchv1.Job)
		var completions string
		switch parallelism := replicas(j.Spec.Parallelism); {
		case j.Spec.Completions != nil:
			completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
		case parallelism > 1:
			completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, parallelism)
		default:
			completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
		}
		var took string
		switch {
		case j.Status.StartTime == nil:
		case j.Status.CompletionTime == nil:
			took = age(*j.Status.StartTime)
		default:
			took = translateTimestampSince(*j.Status.StartTime, *j.Status.CompletionTime)
		}
		has := func(t batchv1.JobConditionType) bool {
			for _, c := range j.Status.Conditions {
				if c.Type == t && c.Status == corev1.ConditionTrue {
					return true
				}
			}
			return false
		}
		status := "Running"
		switch {
		case has(batchv1.JobComplete):
			status = "Complete"
		case has(batchv1.JobFailed):
			status = "Failed"
		case j.DeletionTimestamp != nil:
			status = "Terminating"
		case has(batchv1.JobSuspended):
			status = "Suspended"
		case has(batchv1.JobFailureTarget):
			status = "FailureTarget"
		case has(batchv1.JobSuccessCriteriaMet):
			status = "SuccessCriteriaMet"
		}
		names, images := containerCells(j.Spec.Template.Spec.Containers)
		return []any{j.Name, status, completions, took, age(j.CreationTimestamp), names, images, metav1.FormatLabelSelector(j.Spec.Selector)}
	},
}

// cronJobTable: cronJobColumnDefinitions and printCronJob.
var cronJobTable = &tablePrinter{
	columns: columns(
		nameColumn,
		metav1.TableColumnDefinition{Name: "Schedule", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]},
		metav1.TableColumnDefinition{Name: "Timezone", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]},
		metav1.TableColumnDefinition{Name: "Suspend", Type: "boolean", Description: batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]},
		metav1.TableColumnDefinition{Name: "Active", Type: "integer", Description: batchv1.CronJobStatus{}.SwaggerDoc()["active"]},
		metav1.TableColumnDefinition{Name: "Last Schedule", Type: "string", Description: batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]},
		ageColumn,
		containersColumns,
		metav1.TableColumnDefinition{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	),
	cells: func(obj runtime.Object, age func(metav1.Time) string) []any {
		c := obj.(*batchv1.CronJob)
		last := "<none>"
		if c.Status.LastScheduleTime != nil {
			last = age(*c.Status.LastScheduleTime)
		}
		tz := "<none>"
		if c.Spec.TimeZone != nil {
			tz = *c.Spec.TimeZone
		}
		suspend := "<unset>" // printBoolPtr
		if c.Spec.Suspend != nil {
			suspend = "False"
			if *c.Spec.Suspend {
				suspend = "True"
			}
		}
		t := c.Spec.JobTemplate.Spec
		names, images := containerCells(t.Template.Spec.Containers)
		return []any{
			c.Name, c.Spec.Schedule, tz, suspend, int64(len(c.Status.Active)), last, age(c.CreationTimestamp),
			names, images, metav1.FormatLabelSelector(t.Selector),
		}
	},
}
