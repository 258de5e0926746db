/* LPCNet copy-synthesis through Debian's libcodec2 (lpcnet_freedv.h): 16 kHz s16le mono on stdin ->
 * LPCNet features quantised at FreeDV 2020's 1733 bit/s -> LPCNet neural synthesis -> s16le on stdout.
 * Build: gcc -O2 -o lpcnet_copysynth lpcnet_copysynth.c $(pkg-config --cflags --libs codec2) */
#include <stdio.h>
#include <stdlib.h>
#include <codec2/lpcnet_freedv.h>

int main(int argc, char **argv) {
    int vq = argc > 1 ? atoi(argv[1]) : LPCNET_PRED;
    LPCNetFreeDV *lf = lpcnet_freedv_create(vq);
    int n = lpcnet_samples_per_frame(lf);
    int nbits = lpcnet_bits_per_frame(lf);
    short *pcm = calloc(n, sizeof(short));
    char *frame = calloc(nbits, 1);
    size_t got;
    while ((got = fread(pcm, sizeof(short), n, stdin)) > 0) {
        for (size_t i = got; i < (size_t)n; i++) pcm[i] = 0;
        lpcnet_enc(lf, pcm, frame);
        lpcnet_dec(lf, frame, pcm);
        fwrite(pcm, sizeof(short), n, stdout);
    }
    lpcnet_freedv_destroy(lf);
    return 0;
}
