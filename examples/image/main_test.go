package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSmall runs the example on a small synthetic card on the default device (the CPU
// backend without a GPU) with its check against plain Go, and reads the PNGs back.
func TestSmall(t *testing.T) {
	dir := t.TempDir()
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-size", "96", "-sigma", "1.5", "-out", dir, "-check"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	if !strings.Contains(out.String(), "check: ok") {
		t.Errorf("no check in the output:\n%s", out.String())
	}
	t.Log("\n" + out.String())
	for name, model := range map[string]color.Model{"blur.png": color.RGBAModel, "edges.png": color.GrayModel} {
		img := readPNG(t, filepath.Join(dir, name))
		if img.Bounds() != image.Rect(0, 0, 96, 96) || img.ColorModel() != model {
			t.Errorf("%s: %v, %v", name, img.Bounds(), img.ColorModel())
		}
	}
}

// TestInputFile filters a random PNG given with -in.
func TestInputFile(t *testing.T) {
	dir := t.TempDir()
	src := image.NewNRGBA(image.Rect(0, 0, 40, 23))
	for i := range src.Pix {
		src.Pix[i] = uint8(rand.IntN(256))
	}
	in := filepath.Join(dir, "in.png")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, src); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-in", in, "-out", dir, "-check"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	if img := readPNG(t, filepath.Join(dir, "edges.png")); img.Bounds() != src.Rect {
		t.Errorf("edges.png: %v", img.Bounds())
	}
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestBadFlags(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-size", "x"}, &out, &errs); code != 2 {
		t.Errorf("exit %d for a bad flag", code)
	}
	dir := t.TempDir()
	for _, args := range [][]string{{"-size", "0"}, {"-size", "8", "-sigma", "0"}, {"-in", filepath.Join(dir, "missing.png")}} {
		if code := run(context.Background(), append(args, "-out", dir), &out, &errs); code != 1 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}
