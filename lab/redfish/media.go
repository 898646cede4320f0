package redfish

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Transfer parameters InsertMedia accepts. The server always downloads the
// whole image first, so either TransferMethod ends the same way.
var (
	transferProtocols = []string{"HTTP", "HTTPS"}
	transferMethods   = []string{"Stream", "Upload"}
	insertParams      = []string{"Image", "Inserted", "WriteProtected", "UserName", "Password", "TransferProtocolType", "TransferMethod", "MediaType"}
)

const ejectAction = "VirtualMedia.EjectMedia"

func (s *Server) listMedia(w http.ResponseWriter, _ *http.Request, rq *request) error {
	devices := mediaDevices(rq.system)
	paths := make([]string, len(devices))
	for i, d := range devices {
		paths[i] = mediaPath(rq.system.ID, d)
	}
	writeJSON(w, http.StatusOK, collection("#VirtualMediaCollection.VirtualMediaCollection", mediaCollectionPath(rq.system.ID), "Virtual Media Collection", paths))
	return nil
}

func mediaDevices(sys *System) []string {
	out := make([]string, 0, len(sys.Media))
	for d := range sys.Media {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// device returns the virtual media device a route addresses.
func device(rq *request) (string, Media, error) {
	name := rq.param("device")
	m, ok := rq.system.Media[name]
	if !ok {
		return "", Media{}, errResourceNotFound("VirtualMedia", name)
	}
	return name, m, nil
}

func (s *Server) getMedia(w http.ResponseWriter, _ *http.Request, rq *request) error {
	name, m, err := device(rq)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, mediaResource(rq.system.ID, name, m))
	return nil
}

func mediaResource(system, name string, m Media) resource {
	connected := "NotConnected"
	if m.Inserted {
		connected = "URI"
	}
	return resource{
		"@odata.type":       "#VirtualMedia.v1_4_0.VirtualMedia",
		"@odata.id":         mediaPath(system, name),
		"Id":                name,
		"Name":              "Virtual " + name,
		"MediaTypes":        nonNil(m.MediaTypes),
		"Image":             m.Image,
		"ImageName":         imageName(m.Image),
		"Inserted":          m.Inserted,
		"WriteProtected":    m.WriteProtected,
		"ConnectedVia":      connected,
		"TransferMethod":    "Upload",
		"VerifyCertificate": false,
		"Actions": resource{
			"#VirtualMedia.InsertMedia": resource{"target": insertMediaPath(system, name)},
			"#VirtualMedia.EjectMedia":  resource{"target": ejectMediaPath(system, name)},
		},
	}
}

// insertRequest is a parsed InsertMedia body.
type insertRequest struct {
	src            imageSource
	image          string
	writeProtected bool
}

// insertMedia downloads the image into the image directory, then attaches
// that file. The device must be empty: Ironic ejects first, and a BMC that
// silently swapped media would hide client bugs.
func (s *Server) insertMedia(w http.ResponseWriter, r *http.Request, rq *request) error {
	name, m, err := device(rq)
	if err != nil {
		return err
	}
	body, err := readObject(w, r)
	if err != nil {
		return err
	}
	in, err := parseInsert(body, m)
	if err != nil {
		return err
	}
	if m.Inserted {
		return errConflict("ResourceInUse", fmt.Sprintf("Device %s already holds %s; eject it first (%s).", name, m.Image, ejectMediaPath(rq.system.ID, name)))
	}
	file, err := s.images.fetch(r.Context(), rq.system.ID, name, in.src)
	if err != nil {
		return err
	}
	img := Image{URL: in.image, Path: file, WriteProtected: in.writeProtected}
	if err := s.backend.InsertMedia(r.Context(), rq.system.ID, name, img); err != nil {
		s.images.remove(file)
		return backendError(err, "ActionParameterValueError", "ResourceInUse")
	}
	s.images.remove(s.images.track(rq.system.ID, name, file))
	s.recordOperation(rq.system.ID, opMediaInsert)
	s.log.V(1).Info("Media inserted", "system", rq.system.ID, "device", name, "image", in.src.url.Redacted())
	return noContent(w)
}

func parseInsert(body object, m Media) (insertRequest, error) {
	var in insertRequest
	if k := body.unknown(insertParams...); k != "" {
		return in, errActionParamUnknown(insertAction, k, insertParams)
	}
	str := map[string]string{}
	for _, p := range []string{"Image", "UserName", "Password", "TransferProtocolType", "TransferMethod", "MediaType"} {
		v, _, terr := body.str(p)
		if terr != nil {
			return in, errActionParamType(insertAction, p, terr.raw, "a string")
		}
		str[p] = v
	}
	flags := map[string]bool{}
	for _, p := range []string{"Inserted", "WriteProtected"} {
		v, ok, terr := body.boolean(p)
		if terr != nil {
			return in, errActionParamType(insertAction, p, terr.raw, "a boolean")
		}
		flags[p] = v || !ok // both default to true
	}
	if str["Image"] == "" {
		return in, errActionParamMissing(insertAction, "Image")
	}
	if err := checkInsertOptions(str, flags, m); err != nil {
		return in, err
	}
	u, err := checkImageURL(str["Image"])
	if err != nil {
		return in, err
	}
	in.src = imageSource{url: u, user: str["UserName"], password: str["Password"]}
	// The URL as sent, unless it carries a password nobody should read
	// back from the resource.
	in.image, in.writeProtected = str["Image"], flags["WriteProtected"]
	if _, hasPassword := u.User.Password(); hasPassword {
		in.image = u.Redacted()
	}
	return in, nil
}

func checkInsertOptions(str map[string]string, flags map[string]bool, m Media) error {
	if (str["UserName"] == "") != (str["Password"] == "") {
		missing := "Password"
		if str["UserName"] == "" {
			missing = "UserName"
		}
		return newError(http.StatusBadRequest, "ActionParameterMissing",
			fmt.Sprintf("The action %s requires the parameter %s when the other of UserName and Password is present: they go together.", insertAction, missing),
			"Send both UserName and Password, or neither.", insertAction, missing).withRelated("#/" + missing)
	}
	if !flags["Inserted"] {
		return errActionParamValue(insertAction, "Inserted", "false is not supported: this service inserts the media it downloads; omit Inserted or send true")
	}
	if p := str["TransferProtocolType"]; p != "" {
		scheme := strings.ToUpper(strings.SplitN(str["Image"], ":", 2)[0])
		if !slices.Contains(transferProtocols, p) || p != scheme {
			return errActionParamValue(insertAction, "TransferProtocolType", fmt.Sprintf("%q must match the Image URL scheme (one of %s)", p, strings.Join(transferProtocols, ", ")))
		}
	}
	if t := str["TransferMethod"]; t != "" && !slices.Contains(transferMethods, t) {
		return errActionParamNotSupported(insertAction, "TransferMethod", t, transferMethods)
	}
	if t := str["MediaType"]; t != "" && !slices.Contains(m.MediaTypes, t) {
		return errActionParamNotSupported(insertAction, "MediaType", t, m.MediaTypes)
	}
	return nil
}

// ejectMedia takes no parameters: clients send no body at all, or {}.
// Ejecting an empty device succeeds.
func (s *Server) ejectMedia(w http.ResponseWriter, r *http.Request, rq *request) error {
	name, _, err := device(rq)
	if err != nil {
		return err
	}
	body, err := readObject(w, r)
	if err != nil {
		return err
	}
	if k := body.unknown(); k != "" {
		return errActionParamUnknown(ejectAction, k, nil)
	}
	if err := s.backend.EjectMedia(r.Context(), rq.system.ID, name); err != nil {
		return backendError(err, "ActionParameterValueError", "ResourceInUse")
	}
	s.images.release(rq.system.ID, name)
	s.recordOperation(rq.system.ID, opMediaEject)
	return noContent(w)
}
