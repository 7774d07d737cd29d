"""Offline speech sidecar: eSpeak NG synthesis and PocketSphinx recognition over stdio.

Framing, both directions: an 8-byte header (two big-endian uint32: JSON length, binary length), the
JSON object (UTF-8), then the binary payload (16-bit signed little-endian mono PCM, or nothing).
Requests carry `id` and `op`; each gets exactly one response with the same `id` and `ok`.
Only this process's stdout carries frames; diagnostics go to stderr.
"""

import ctypes
import io
import json
import os
import struct
import sys
import tempfile
import time
import traceback

PROTOCOL_VERSION = 1
TTS_RATE_HZ = 22050
ASR_RATE_HZ = 16000
# espeak_Initialize output modes and espeak_Synth flags (speak_lib.h).
AUDIO_OUTPUT_SYNCHRONOUS = 2
ESPEAK_CHARS_UTF8 = 1
ESPEAK_RATE = 1
ESPEAK_ENDPAUSE = 0x1000
# The eSpeak NG voices for the product's languages: Latin American Spanish for US and Mexican consumers.
VOICES = {"en": "en-us", "es": "es-419"}
MAX_TEXT_CHARS = 5000
MAX_STREAMS = int(os.environ.get("SPEECH_MAX_STREAMS", "16"))


class Tts:
    def __init__(self):
        import espeakng_loader

        self.lib = ctypes.CDLL(espeakng_loader.get_library_path())
        self.lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self.lib.espeak_Initialize.restype = ctypes.c_int
        self.lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self.lib.espeak_SetVoiceByName.restype = ctypes.c_int
        self.lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.lib.espeak_Synth.argtypes = [
            ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
            ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
        ]
        self.lib.espeak_Synth.restype = ctypes.c_int
        rate = self.lib.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, espeakng_loader.get_data_path().encode(), 0)
        if rate != TTS_RATE_HZ:
            raise RuntimeError(f"espeak_Initialize answered {rate}")
        self.chunks = []
        callback_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)
        # Kept on self: ctypes frees a callback whose Python object is collected.
        self.callback = callback_type(self._on_audio)
        self.lib.espeak_SetSynthCallback(self.callback)
        self.voice = None

    def _on_audio(self, wav, samples, _events):
        if wav and samples > 0:
            self.chunks.append(ctypes.string_at(wav, samples * 2))
        return 0

    def synthesize(self, text, lang, words_per_minute):
        voice = VOICES.get(lang)
        if voice is None:
            raise ValueError(f"no voice for language {lang!r}")
        if voice != self.voice:
            if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
                raise RuntimeError(f"eSpeak NG has no voice {voice}")
            self.voice = voice
        self.lib.espeak_SetParameter(ESPEAK_RATE, int(words_per_minute), 0)
        data = text.encode("utf-8") + b"\0"
        self.chunks = []
        status = self.lib.espeak_Synth(data, len(data), 0, 0, 0, ESPEAK_CHARS_UTF8 | ESPEAK_ENDPAUSE, None, None)
        if status != 0:
            raise RuntimeError(f"espeak_Synth failed with {status}")
        return b"".join(self.chunks)


class Asr:
    """One PocketSphinx decoder per concurrent stream, created on demand and reused."""

    def __init__(self):
        import pocketsphinx

        self.ps = pocketsphinx
        model = pocketsphinx.get_model_path()
        self.hmm = os.path.join(model, "en-us", "en-us")
        self.dict = os.path.join(model, "en-us", "cmudict-en-us.dict")
        self.general_lm = os.path.join(model, "en-us", "en-us.lm.bin")
        self.lm_files = {}
        self.vocabulary = None
        self.cmn = None
        self.cmn_by_channel = {}
        self.free = []
        # The language models each decoder was built with, by id(decoder).
        self.models_of = {}
        self.streams = {}
        self.workdir = tempfile.mkdtemp(prefix="dialer-speech-")

    def set_language_model(self, name, corpus):
        # ArpaBoLM is the ARPA builder PocketSphinx ships: a fixed-discount trigram over the sentences.
        from pocketsphinx.lm import ArpaBoLM

        vocabulary = self._vocabulary()
        kept = []
        dropped = 0
        for line in corpus.lower().splitlines():
            words = line.split()
            if not words:
                continue
            # A sentence with a word the dictionary cannot pronounce would teach the model a gap.
            if all(w in vocabulary for w in words):
                kept.append(" ".join(words))
            else:
                dropped += 1
        if not kept:
            raise ValueError("no sentence of the corpus is pronounceable")
        lm = ArpaBoLM(sentfile=io.StringIO("\n".join(kept)), add_start=True, case="lower")
        lm.compute()
        out = io.StringIO()
        lm.write(out)
        path = os.path.join(self.workdir, f"{name}.arpa")
        with open(path, "w") as f:
            f.write(out.getvalue())
        # A new dict, so decoders built with the previous models compare unequal and are dropped.
        self.lm_files = {**self.lm_files, name: path}
        for decoder in self.free:
            self.models_of.pop(id(decoder), None)
        self.free = []
        return {"sentences": len(kept), "dropped": dropped, "words": len(lm.grams_1)}

    def _vocabulary(self):
        if self.vocabulary is None:
            with open(self.dict, encoding="utf-8") as f:
                self.vocabulary = {line.split(" ", 1)[0] for line in f if line.strip()}
        return self.vocabulary

    def _decoder(self):
        if self.free:
            return self.free.pop()
        decoder = self.ps.Decoder(hmm=self.hmm, dict=self.dict, lm=self.general_lm, loglevel="FATAL", bestpath=True)
        for name, path in self.lm_files.items():
            decoder.add_lm_file(name, path)
        self.models_of[id(decoder)] = dict(self.lm_files)
        return decoder

    def _release(self, decoder):
        if self.models_of.get(id(decoder)) == self.lm_files:
            self.free.append(decoder)
        else:
            self.models_of.pop(id(decoder), None)

    def _activate(self, decoder, search):
        name = search or ("domain" if "domain" in self.lm_files else "general")
        if name != "general" and name not in self.lm_files:
            raise ValueError(f"no language model {name!r}")
        # The decoder's own search, made from the general model at construction, is "_default".
        decoder.activate_search("_default" if name == "general" else name)
        return name

    def _result(self, decoder):
        frame_ms = 1000 / int(decoder.config["frate"])
        words = []
        for seg in decoder.seg():
            if seg.word in ("<s>", "</s>", "<sil>") or seg.word.startswith(("[", "+")):
                continue
            # The binding answers posteriors as linear probabilities (bestpath lattice).
            words.append({
                "word": seg.word.split("(")[0],
                "start_ms": round(seg.start_frame * frame_ms),
                "end_ms": round((seg.end_frame + 1) * frame_ms),
                "confidence": round(min(1.0, max(0.0, seg.prob)), 4),
            })
        # The utterance's posterior is the product of its words', which punishes length; the mean is
        # comparable across utterances.
        confidence = round(sum(w["confidence"] for w in words) / len(words), 4) if words else 0.0
        return {"text": " ".join(w["word"] for w in words), "confidence": confidence, "words": words}

    def recognize(self, pcm, search):
        decoder = self._decoder()
        try:
            name = self._activate(decoder, search)
            decoder.start_utt()
            decoder.process_raw(pcm, False, True)
            decoder.end_utt()
            self._learn_cmn(decoder, None)
            return {**self._result(decoder), "search": name}
        finally:
            self._release(decoder)

    def _learn_cmn(self, decoder, channel):
        cmn = decoder.get_cmn(True)
        self.cmn = cmn
        if channel is not None:
            self.cmn_by_channel[channel] = cmn
            if len(self.cmn_by_channel) > 1000:
                self.cmn_by_channel.pop(next(iter(self.cmn_by_channel)))

    def stream_start(self, stream, search, channel):
        if stream in self.streams:
            raise ValueError(f"stream {stream!r} is already open")
        if len(self.streams) >= MAX_STREAMS:
            raise RuntimeError("too many open streams")
        decoder = self._decoder()
        try:
            name = self._activate(decoder, search)
            # A stream is normalized live, from a prior cepstral mean: the last one this line (or any
            # line) ended with is far closer to the speech than the model's default, which costs
            # the first second of every utterance its words.
            cmn = self.cmn_by_channel.get(channel) or self.cmn
            if cmn:
                decoder.set_cmn(cmn)
            decoder.start_utt()
        except Exception:
            self._release(decoder)
            raise
        self.streams[stream] = {"decoder": decoder, "search": name, "channel": channel}

    def stream_feed(self, stream, pcm, want_partial):
        decoder = self._stream(stream)["decoder"]
        decoder.process_raw(pcm, False, False)
        if not want_partial:
            return {}
        hyp = decoder.hyp()
        return {"partial": hyp.hypstr if hyp is not None else ""}

    def stream_end(self, stream):
        entry = self.streams.pop(stream, None)
        if entry is None:
            raise ValueError(f"no stream {stream!r}")
        decoder = entry["decoder"]
        try:
            decoder.end_utt()
            self._learn_cmn(decoder, entry["channel"])
            return {**self._result(decoder), "search": entry["search"]}
        finally:
            self._release(decoder)

    def stream_cancel(self, stream):
        entry = self.streams.pop(stream, None)
        if entry is not None:
            try:
                entry["decoder"].end_utt()
            finally:
                self._release(entry["decoder"])
        return {}

    def _stream(self, stream):
        entry = self.streams.get(stream)
        if entry is None:
            raise ValueError(f"no stream {stream!r}")
        return entry


def read_exact(stream, size):
    data = bytearray()
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            return None
        data.extend(chunk)
    return bytes(data)


def write_frame(out, header, payload=b""):
    body = json.dumps(header, separators=(",", ":")).encode("utf-8")
    out.write(struct.pack(">II", len(body), len(payload)))
    out.write(body)
    out.write(payload)
    out.flush()


class Server:
    def __init__(self):
        self.tts = None
        self.asr = None

    def _tts(self):
        if self.tts is None:
            self.tts = Tts()
        return self.tts

    def _asr(self):
        if self.asr is None:
            self.asr = Asr()
        return self.asr

    def handle(self, req, payload):
        op = req.get("op")
        if op == "hello":
            return {
                "protocol": PROTOCOL_VERSION,
                "tts_rate_hz": TTS_RATE_HZ,
                "asr_rate_hz": ASR_RATE_HZ,
                "tts_languages": sorted(VOICES),
                "asr_languages": ["en"],
            }, b""
        if op == "synthesize":
            text = str(req.get("text", ""))
            if not text.strip() or len(text) > MAX_TEXT_CHARS:
                raise ValueError("text must be 1 to 5000 characters")
            started = time.perf_counter()
            pcm = self._tts().synthesize(text, req.get("lang", "en"), req.get("words_per_minute", 160))
            return {"rate_hz": TTS_RATE_HZ, "synth_ms": round((time.perf_counter() - started) * 1000, 2)}, pcm
        if op == "set_language_model":
            return self._asr().set_language_model(str(req["name"]), str(req["corpus"])), b""
        if op in ("recognize", "stream_start", "stream_feed") and len(payload) % 2:
            raise ValueError("PCM must be whole 16-bit samples")
        if op == "recognize":
            return self._asr().recognize(payload, req.get("search")), b""
        if op == "stream_start":
            channel = req.get("channel")
            self._asr().stream_start(str(req["stream"]), req.get("search"), None if channel is None else str(channel))
            return {}, b""
        if op == "stream_feed":
            return self._asr().stream_feed(str(req["stream"]), payload, bool(req.get("partial"))), b""
        if op == "stream_end":
            return self._asr().stream_end(str(req["stream"])), b""
        if op == "stream_cancel":
            return self._asr().stream_cancel(str(req["stream"])), b""
        raise ValueError(f"unknown op {op!r}")


def main():
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    # Nothing but frames may reach stdout: a stray print from a library would desynchronize the reader.
    sys.stdout = sys.stderr
    server = Server()
    while True:
        head = read_exact(stdin, 8)
        if head is None:
            return
        json_len, bin_len = struct.unpack(">II", head)
        body = read_exact(stdin, json_len)
        payload = read_exact(stdin, bin_len) if bin_len else b""
        if body is None or payload is None:
            return
        req = json.loads(body)
        try:
            result, out = server.handle(req, payload)
            write_frame(stdout, {"id": req.get("id"), "ok": True, **result}, out)
        except Exception as err:  # every failure is answered: the client waits for this id
            if not isinstance(err, (ValueError, KeyError)):
                traceback.print_exc(file=sys.stderr)
            write_frame(stdout, {"id": req.get("id"), "ok": False, "error": f"{type(err).__name__}: {err}"})


if __name__ == "__main__":
    main()
