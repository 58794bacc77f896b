// SPDX-License-Identifier: GPL-3.0-or-later
// Translating a file from a run's translator file without LibTorch (ts/infer/file_translation.h):
// which command lines it serves, what it hands to the LibTorch path and why, and that its lines are
// those of the LibTorch path's Translator on the same weights.
#include "ts/infer/file_translation.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>

#include "test_utils.h"
#include "tiny_run.h"
#include "ts/decode/translator.h"
#include "ts/infer/translator_file.h"
#include "ts/train/checkpoint.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::optional<FileTranslationRequest> parse(const std::vector<std::string>& args, bool auto_is_cpu = true) {
  return parse_translate_arguments(args, auto_is_cpu);
}

TEST(FileTranslationArguments, ServesTheOptionsOfTranslatingOnPackedWeights) {
  const auto r = parse({"--checkpoint", "runs/a", "--beam", "4", "--length-penalty=0.6", "--weights", "int8",
                        "--threads", "2", "--batch=32", "--shortlist", "--input", "in.txt", "--device", "cpu"});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->checkpoint, "runs/a");
  EXPECT_EQ(r->beam, 4);
  EXPECT_DOUBLE_EQ(r->length_penalty, 0.6);
  EXPECT_EQ(r->weights, "int8");
  EXPECT_EQ(r->threads, 2);
  EXPECT_EQ(r->batch, 32);
  EXPECT_TRUE(r->shortlist);
  EXPECT_EQ(r->input, "in.txt");

  const auto plain = parse({"--checkpoint=x.ckpt"});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->beam, 0);  // the model's own settings
  EXPECT_EQ(plain->batch, -1);
  EXPECT_LT(plain->length_penalty, 0);
  EXPECT_TRUE(plain->weights.empty());
  EXPECT_FALSE(plain->shortlist);
}

TEST(FileTranslationArguments, LeavesEverythingElseToTheLibTorchPath) {
  const std::vector<std::string> c{"--checkpoint", "r"};
  auto with = [&c](std::vector<std::string> more) {
    auto args = c;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  EXPECT_FALSE(parse({}));                                     // --checkpoint is required
  EXPECT_FALSE(parse(with({"--nbest", "2"})));                 // n-best lists
  EXPECT_FALSE(parse(with({"--sample"})));                     // sampling
  EXPECT_FALSE(parse(with({"--attention-json", "a.jsonl"})));  // attention
  EXPECT_FALSE(parse(with({"--help"})));
  EXPECT_FALSE(parse(with({"--weights", "libtorch"})));  // LibTorch's operations
  EXPECT_FALSE(parse(with({"--weights", "fp16"})));      // refused by the command
  EXPECT_FALSE(parse(with({"--device", "cuda"})));
  EXPECT_FALSE(parse(with({"--device", "auto"}), /*auto_is_cpu=*/false));  // a LibTorch with CUDA
  EXPECT_TRUE(parse(with({"--device", "auto"}), /*auto_is_cpu=*/true));
  EXPECT_FALSE(parse(with({"--beam", "0"})));  // outside the command's limits
  EXPECT_FALSE(parse(with({"--beam", "257"})));
  EXPECT_FALSE(parse(with({"--beam", "4x"})));
  EXPECT_FALSE(parse(with({"--batch", "0"})));
  EXPECT_FALSE(parse(with({"--length-penalty", "5.5"})));
  EXPECT_FALSE(parse(with({"--length-penalty", "nan"})));
  EXPECT_FALSE(parse(with({"--threads", "-1"})));
  EXPECT_FALSE(parse(with({"--beam"})));                      // a value missing
  EXPECT_FALSE(parse(with({"--input", "--beam", "4"})));      // an option where a value belongs
  EXPECT_FALSE(parse(with({"--beam", "4", "--beam", "5"})));  // given twice
  EXPECT_FALSE(parse(with({"--shortlist=true"})));
  EXPECT_FALSE(parse(with({"extra"})));  // a positional argument
}

TEST(FileTranslation, ARunFolderMeansItsLastCheckpoint) {
  test::TempDir dir;
  EXPECT_EQ(checkpoint_of(dir.str()), (fs::path(dir.str()) / "last.ckpt").string());
  EXPECT_EQ(checkpoint_of(dir.file("best.ckpt")), dir.file("best.ckpt"));
  dir.write("config.json", "{}");
  dir.write("model.safetensors", "x");
  EXPECT_EQ(checkpoint_of(dir.str()), dir.str());  // an exported model folder is the checkpoint
}

class FileTranslationTest : public test::TinyRunSuite {};

TEST_F(FileTranslationTest, TranslatesAFileAsTheLibTorchPathDoesAndHandsOverWhatItCannotServe) {
  ASSERT_TRUE(fs::exists(checkpoint()));
  fs::remove(translator_file_for(checkpoint()));
  FileTranslationRequest request;
  request.checkpoint = dir_->str();  // the run folder: its last.ckpt
  request.beam = 3;
  request.threads = 2;
  request.batch = 2;

  std::string why_not;
  EXPECT_EQ(FileTranslation::open(request, why_not), nullptr);
  EXPECT_NE(why_not.find(".translator does not exist yet"), std::string::npos) << why_not;

  auto loaded = load_checkpoint(checkpoint(), at::kCPU);
  export_translator(loaded, checkpoint());
  const std::vector<std::string> lines{"Ich sehe den Hund.", "", "Der Hund schläft.",
                                       "Wir sehen den Hund und die Katze schläft und er sieht das Haus.", "Haus."};
  std::string text;
  for (const auto& line : lines) text += line + "\r\n";  // Windows line ends are read as one
  request.input = dir_->write("input.txt", text);
  why_not.clear();
  const auto translation = FileTranslation::open(request, why_not);
  ASSERT_NE(translation, nullptr) << why_not;
  std::istringstream unused;
  std::ostringstream out;
  translation->run(unused, out);

  DecodeConfig config = loaded.meta.config.decode;
  config.mode = DecodeMode::kBeam;
  config.beam = 3;
  Translator translator(loaded.model, loaded.pipeline);
  std::string expected;
  for (const auto& line : translator.translate_all(lines, config, 2)) expected += line + "\n";
  EXPECT_EQ(out.str(), expected);
  EXPECT_GT(expected.size(), lines.size() * 4) << "the model says next to nothing: a weak comparison";

  // Standard input when there is no input file.
  request.input.clear();
  const auto from_stream = FileTranslation::open(request, why_not);
  ASSERT_NE(from_stream, nullptr);
  std::istringstream in(text);
  std::ostringstream streamed;
  from_stream->run(in, streamed);
  EXPECT_EQ(streamed.str(), expected);

  request.weights = "libtorch";
  EXPECT_EQ(FileTranslation::open(request, why_not), nullptr);
  EXPECT_NE(why_not.find("LibTorch"), std::string::npos) << why_not;
  request.weights.clear();

  // Asked for on the command line, a shortlist the run does not have is the person's to make.
  request.shortlist = true;
  EXPECT_THROW(FileTranslation::open(request, why_not), std::invalid_argument);
  request.shortlist = false;

  // Mistakes are named; the caller hands them to the LibTorch path or reports them.
  auto missing = request;
  missing.checkpoint = dir_->file("no-such.ckpt");
  EXPECT_THROW(FileTranslation::open(missing, why_not), std::invalid_argument);
  auto no_input = request;
  no_input.input = dir_->file("no-such-input.txt");
  try {
    FileTranslation::open(no_input, why_not);
    ADD_FAILURE() << "an unreadable input file was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-input.txt"), std::string::npos) << e.what();
  }

  // A checkpoint written again since makes the translator file stale.
  fs::last_write_time(checkpoint(), fs::last_write_time(checkpoint()) + std::chrono::seconds(5));
  EXPECT_EQ(FileTranslation::open(request, why_not), nullptr);
  EXPECT_NE(why_not.find("earlier state"), std::string::npos) << why_not;
}

}  // namespace
}  // namespace ts
