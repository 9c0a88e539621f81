package dev.irisjvm.bench.moe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.OptionsUnderTest;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sweep's command line: the issue's cases by default, which cases run the low-latency mode, and bad options named. */
class MoeOptionsTest {
    private static final OptionsUnderTest<MoeOptions> OPTIONS = new OptionsUnderTest<>(MoeOptions::new, MoeOptions::validate);

    @Test
    void defaultsAreTheIssuesCases() {
        MoeOptions o = OPTIONS.valid();
        List<MoeCase> cases = o.cases();
        assertEquals(16, cases.size());
        int[] tokens = {128, 256, 512, 1024, 2048, 4096, 8192, 16384};
        for (int i = 0; i < tokens.length; i++) {
            assertEquals(new MoeCase(MoeModel.DEEPSEEK_V3, tokens[i], tokens[i] <= 512, true), cases.get(i));
            assertEquals(new MoeCase(MoeModel.MIXTRAL, tokens[i], tokens[i] <= 512, true), cases.get(i + tokens.length));
        }
        assertEquals(20, o.rounds().reps());
        assertEquals(5, o.rounds().warmup());
        assertEquals(MoeOptions.DEFAULT_ROUNDS, o.rounds().rounds());
        assertEquals(27, o.rounds().seed(), "a fixed seed: every run routes the same way");
        assertEquals(48L << 30, o.rounds().job().heapBytes());
        assertEquals(30_000, o.rounds().job().deviceTimeoutMs());
    }

    @Test
    void theLayersAreDeepSeekV3AndMixtral() {
        assertEquals(7168, MoeModel.DEEPSEEK_V3.hidden());
        assertEquals(256, MoeModel.DEEPSEEK_V3.experts());
        assertEquals(8, MoeModel.DEEPSEEK_V3.topK());
        assertEquals(4096, MoeModel.MIXTRAL.hidden());
        assertEquals(8, MoeModel.MIXTRAL.experts());
        assertEquals(2, MoeModel.MIXTRAL.topK());
        assertEquals(16384L * 8 * 7168 * 2, new MoeCase(MoeModel.DEEPSEEK_V3, 16384, false, false).bytesPerRank());
    }

    @Test
    void chosenCases() {
        MoeOptions o = OPTIONS.valid("--models", " MIXTRAL ", "--tokens", "16384, 64", "--ll-max-tokens", "100", "--layer-max-tokens",
                "1024");
        assertEquals(List.of(new MoeCase(MoeModel.MIXTRAL, 16384, false, false), new MoeCase(MoeModel.MIXTRAL, 64, true, true)),
                o.cases());
        assertTrue(OPTIONS.parse("--ll-max-tokens", "0").cases().stream().noneMatch(MoeCase::lowLatency));
        assertTrue(OPTIONS.parse("--layer-max-tokens", "0").cases().stream().noneMatch(MoeCase::layer));
        MoeOptions layerOnly = OPTIONS.valid("--layer-only", "--models", "mixtral", "--tokens", "128,32768", "--layer-max-tokens", "0");
        assertTrue(layerOnly.layerOnly());
        assertEquals(List.of(new MoeCase(MoeModel.MIXTRAL, 128, false, true), new MoeCase(MoeModel.MIXTRAL, 32768, false, true)),
                layerOnly.cases(), "every token count, the layer alone");
    }

    @Test
    void badOptionsAreNamed() {
        OPTIONS.rejects("--reps 5 is below " + MoeOptions.MIN_REPS, "--reps", "5");
        OPTIONS.rejects("--rounds", "--rounds", "0");
        OPTIONS.rejects("--ll-max-tokens", "--ll-max-tokens", "-1");
        OPTIONS.rejects("--layer-max-tokens", "--layer-max-tokens", "-1");
        OPTIONS.rejects("--heap-gib", "--heap-gib", "0");
        OPTIONS.rejects("unknown model 'llama'; known: deepseek_v3, mixtral", "--models", "llama");
        OPTIONS.rejects("--tokens: 'many' is not a number", "--tokens", "many");
        OPTIONS.rejects("--tokens: 0 tokens per rank", "--tokens", "128,0");
        OPTIONS.rejects("--models names nothing", "--models", " , ");
    }
}
