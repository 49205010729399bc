package artifact

import (
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The encoder settings are part of the format's reproducibility promise:
// changing them changes the bytes of every artifact (the compiler version in
// the cache key covers that). One goroutine per call, because concurrent
// block encoding would still be deterministic but gains nothing for our
// section sizes and costs memory.
var encoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithWindowSize(1<<23),
		zstd.WithEncoderCRC(true),
	)
})

// The decoder limits each DecodeAll to the capacity of its destination
// (WithDecodeAllCapLimit), which Section sizes from the checked table, so a
// frame cannot decode to more than the table allows. The window cap bounds
// the memory a crafted frame header can ask for.
var decoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxWindow(1<<27),
	)
})

func compress(src []byte) ([]byte, error) {
	enc, err := encoder()
	if err != nil {
		return nil, err
	}
	return enc.EncodeAll(src, make([]byte, 0, len(src)/2+64)), nil
}

func decompress(src []byte, raw int) ([]byte, error) {
	dec, err := decoder()
	if err != nil {
		return nil, err
	}
	return dec.DecodeAll(src, make([]byte, 0, raw))
}
