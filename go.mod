module github.com/go-gpu/gpu

go 1.26
