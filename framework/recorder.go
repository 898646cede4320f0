package framework

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/paritylab/paritylab/results"
)

// Watch is one kind of object a Recorder follows.
type Watch struct {
	// Resource is the kind's resource, e.g. cluster.x-k8s.io/v1beta2 machines.
	Resource schema.GroupVersionResource
	// Namespace limits the watch; empty watches every namespace.
	Namespace string
	// LabelSelector and FieldSelector limit the watch further, to the
	// objects a scenario acts on among others of their kind (a set's
	// Machines, a pool's hosts, one Node); empty selects all.
	LabelSelector, FieldSelector string
	// Role is the part an object plays in the scenario, the same word in
	// both flows (results.Object.Role), e.g. "machine", "host".
	Role string
	// Interchangeable marks objects the flow picks from a pool at random
	// (results.Object.Interchangeable).
	Interchangeable bool
	// IdentityOnly records only name, UID, creation and deletion (Nodes:
	// their labels and conditions are compared from the Nodes at the
	// end; the recorder tells whether a Node was kept or recreated).
	IdentityOnly bool
}

// selectors narrows the watch's lists and watches to its selectors.
func (w Watch) selectors(o *metav1.ListOptions) {
	o.LabelSelector, o.FieldSelector = w.LabelSelector, w.FieldSelector
}

// RecorderInput configures StartRecorder.
type RecorderInput struct {
	// RESTConfig reaches the cluster to watch.
	RESTConfig *rest.Config
	// Watches are the kinds to follow.
	Watches []Watch
	// EventNamespaces are the namespaces whose Events about watched
	// objects are kept.
	EventNamespaces []string
	// EventsSince, when set, leaves out the events last seen before it
	// (to the second, as Events keep time): they belong to the set-up a
	// run starts from, not to the run.
	EventsSince time.Time
	// Logger receives watch errors. Default discard.
	Logger logr.Logger
}

// Recorder watches objects and events and keeps, per object, its phase and
// condition transitions with the time the recorder saw them, its latest
// labels and annotations, and when it went away. What it saw becomes the
// Objects and Events of an Observation.
type Recorder struct {
	mu      sync.Mutex
	objects map[types.UID]*results.Object
	order   []types.UID
	events  map[types.UID]*eventRecord
	cancel  context.CancelFunc
	done    sync.WaitGroup
	now     func() time.Time
	ctx     context.Context
	images  provisioning
	since   time.Time
}

// StartRecorder starts watching and returns once every watch has listed
// what exists, so that nothing created after it returns is missed.
func StartRecorder(ctx context.Context, in RecorderInput) (*Recorder, error) {
	dyn, err := dynamic.NewForConfig(in.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("recorder client: %w", err)
	}
	if in.Logger.GetSink() == nil {
		in.Logger = logr.Discard()
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Recorder{objects: map[types.UID]*results.Object{}, events: map[types.UID]*eventRecord{}, cancel: cancel, now: time.Now,
		ctx: ctx, images: provisioning{dyn: dyn, last: map[string]hostImage{}}, since: in.EventsSince.Truncate(time.Second)}
	var synced []cache.InformerSynced
	for _, w := range in.Watches {
		inf := dynamicinformer.NewFilteredDynamicInformer(dyn, w.Resource, w.Namespace, 0, cache.Indexers{}, w.selectors).Informer()
		if err := inf.SetWatchErrorHandler(watchErrorLogger(in.Logger, w)); err != nil {
			cancel()
			return nil, fmt.Errorf("watch %s: %w", w.Resource, err)
		}
		if _, err := inf.AddEventHandler(r.objectHandler(w)); err != nil {
			cancel()
			return nil, fmt.Errorf("watch %s: %w", w.Resource, err)
		}
		synced = append(synced, r.run(ctx, inf))
	}
	eventsGVR := corev1.SchemeGroupVersion.WithResource("events")
	for _, ns := range in.EventNamespaces {
		inf := dynamicinformer.NewFilteredDynamicInformer(dyn, eventsGVR, ns, 0, cache.Indexers{}, nil).Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    r.observeEvent,
			UpdateFunc: func(_, o any) { r.observeEvent(o) },
		}); err != nil {
			cancel()
			return nil, fmt.Errorf("watch events in %s: %w", ns, err)
		}
		synced = append(synced, r.run(ctx, inf))
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		r.Stop()
		return nil, fmt.Errorf("recorder: watches did not sync: %w", context.Cause(ctx))
	}
	return r, nil
}

func (r *Recorder) run(ctx context.Context, inf cache.SharedIndexInformer) cache.InformerSynced {
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		inf.Run(ctx.Done())
	}()
	return inf.HasSynced
}

// Stop ends every watch; what was recorded stays readable.
func (r *Recorder) Stop() {
	r.cancel()
	r.done.Wait()
}

func (r *Recorder) objectHandler(w Watch) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(o any, initial bool) { r.observe(w, o, observed{initial: initial}) },
		UpdateFunc: func(_, o any) { r.observe(w, o, observed{}) },
		DeleteFunc: func(o any) {
			if tomb, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = tomb.Obj
			}
			r.observe(w, o, observed{deleted: true})
		},
	}
}

// observed says how an object was seen: in the watch's initial list (it
// existed before the recorder started), or deleted.
type observed struct {
	initial, deleted bool
}

// watchErrorLogger reports a watch's errors (a relist after a dropped
// connection, say) instead of client-go's default global log.
func watchErrorLogger(log logr.Logger, w Watch) cache.WatchErrorHandler {
	return func(_ *cache.Reflector, err error) {
		log.Info("Recorder watch error; it relists", "resource", w.Resource.String(), "namespace", w.Namespace, "error", err.Error())
	}
}

func (r *Recorder) observe(w Watch, o any, how observed) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now().UTC()
	rec := r.objects[u.GetUID()]
	if rec == nil {
		rec = &results.Object{Role: w.Role, APIVersion: u.GetAPIVersion(), Kind: u.GetKind(),
			Namespace: u.GetNamespace(), Name: u.GetName(), UID: string(u.GetUID()),
			CreatedAt: u.GetCreationTimestamp().UTC(), Interchangeable: w.Interchangeable}
		r.objects[u.GetUID()] = rec
		r.order = append(r.order, u.GetUID())
	}
	if how.deleted && rec.DeletedAt == nil {
		rec.DeletedAt = &now
	}
	if w.IdentityOnly {
		return
	}
	rec.Labels, rec.Annotations = u.GetLabels(), scenarioAnnotations(u.GetAnnotations())
	observeMachineFields(rec, u, now)
	switch {
	case how.initial:
		// What a host was given before the recorder started is not
		// something the flow under record did.
		r.images.remember(u)
	case !how.deleted:
		r.images.observe(r.ctx, rec, u, now)
	}
	if phase := phaseOf(u); phase != "" && (len(rec.Phases) == 0 || rec.Phases[len(rec.Phases)-1].Phase != phase) {
		rec.Phases = append(rec.Phases, results.PhaseTransition{Phase: phase, At: now})
	}
	rec.Conditions = appendConditionChanges(rec.Conditions, conditionsOf(u), now)
}

// SetProperty records a fact a driver knows about an object, e.g. why a
// scale-down chose it (results.Object.Properties).
func (r *Recorder) SetProperty(uid types.UID, key, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec := r.objects[uid]; rec != nil {
		if rec.Properties == nil {
			rec.Properties = map[string]string{}
		}
		rec.Properties[key] = value
	}
}

// Objects returns what was recorded, in the order objects were first seen.
func (r *Recorder) Objects() []results.Object {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]results.Object, 0, len(r.order))
	for _, uid := range r.order {
		out = append(out, copyObject(*r.objects[uid]))
	}
	return out
}

// Events returns the events about recorded objects, oldest first.
func (r *Recorder) Events() []results.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]results.Event, 0, len(r.events))
	for _, e := range r.events {
		obj := r.objects[e.involved]
		if obj == nil {
			continue
		}
		ev := e.event
		ev.Role = obj.Role
		out = append(out, ev)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

func copyObject(o results.Object) results.Object {
	o.Phases = append([]results.PhaseTransition(nil), o.Phases...)
	o.Conditions = append([]results.ConditionTransition(nil), o.Conditions...)
	o.Replicas = append([]results.ReplicaSample(nil), o.Replicas...)
	o.Provisioning = append([]results.Provisioning(nil), o.Provisioning...)
	return o
}
